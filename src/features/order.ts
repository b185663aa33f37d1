// The order of the feature folders, lowest first: a feature may import (values) only from features listed before it,
// so none can reach one above it, and no two reach each other. What a lower feature needs from a higher one (the
// settings frame, the profile page, the sign-in page's SSO buttons) is passed in by src/app.ts. Files directly in
// src/features/ (text-rules.ts) sit below every folder. test/import-boundary.test.ts reads this list and refuses an
// upward import; docs/architecture.md explains the layout.
export const FEATURE_ORDER = [
  'auth', // accounts, passwords, sessions, sign-in throttle, device cookie, re-authentication window, reveals, sign-in page
  'second-factor', // TOTP, recovery codes, the sign-in step and enrolment, confirming identity by password or code
  'tokens', // personal API tokens; whether an actor (session, token, command line) recently confirmed
  'messages', // emitting and storing messages, message classes, read state, retention
  'delivery', // the delivery worker, its attempts and the Deliveries tab
  'channels', // notification channels and their health
  'inbox', // the inbox pages and the messages API: messages with their deliveries
  'sso', // single sign-on providers, sign-in and identity links
  'reset', // password reset links
  'setup', // the first administrator
  'team', // accounts, roles, invitations
  'profile', // the profile page and its sections
  'settings', // the settings page and its tabs
  'ops', // health, readiness and metrics
  'home', // the home page, which reads the ops figures for "needs attention"
] as const;
