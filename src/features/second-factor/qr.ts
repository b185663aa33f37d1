// QR codes for otpauth:// URIs as inline SVG, rendered on the server (the CSP allows no script).
import QRCode from 'qrcode';

// qrcode's SVG output is a fixed shape: one <svg> holding <path> elements with numeric path data and colours.
// Anything else (script, style, event handlers, foreign elements) is refused before the markup is embedded raw.
const SAFE_SVG =
  /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"(?: (?:viewBox|width|height|shape-rendering)="[0-9a-zA-Z. -]*")*>(?:<path (?:fill|stroke|d)="[#0-9a-zA-Z. -]*"(?: (?:fill|stroke|d)="[#0-9a-zA-Z. -]*")*\/>)*<\/svg>$/;

/** The QR code of `text` as SVG markup that is safe to embed verbatim. */
export async function qrSvg(text: string): Promise<string> {
  const svg = (await QRCode.toString(text, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 })).trim();
  if (!SAFE_SVG.test(svg)) throw new Error('unexpected QR code markup');
  return svg;
}
