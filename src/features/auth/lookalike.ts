// Look-alike usernames: the UTS #39 confusable skeleton, and refusal of names mixing scripts.
import { rectifyConfusion } from 'unicode-confusables';

/** One UTS #39 skeleton pass: NFD, each code point replaced by its confusables.txt prototype, NFD again. */
function skeleton(value: string): string {
  return rectifyConfusion(value.normalize('NFD')).normalize('NFD');
}

/**
 * The key under which two usernames count as the same to the eye: case and confusables both fold, after NFKC
 * ("ｆｕｌｌ" is "full"). Lower-casing first would miss the prototypes of capitals ("Iisa" ~ "lisa", "j0hn" ~ "john",
 * since UTS #39 maps I -> l and 0 -> O), and a single skeleton after it misses "ADMIN" ~ "admin"; so the skeleton
 * runs on the name, on its upper case (capitals to prototypes), and on that lower-cased (m -> rn). Stored in
 * accounts.username_skeleton (unique); migration 0013 holds a frozen copy of this function for its backfill.
 */
export function usernameSkeleton(username: string): string {
  return skeleton(skeleton(skeleton(username.normalize('NFKC')).toUpperCase()).toLowerCase());
}

// Unicode script names, tested through Script_Extensions property escapes; names this Node's V8 does not know are
// skipped.
const SCRIPT_NAMES =
  `Adlam Ahom Anatolian_Hieroglyphs Arabic Armenian Avestan Balinese Bamum Bassa_Vah Batak Bengali Bhaiksuki
  Bopomofo Brahmi Braille Buginese Buhid Canadian_Aboriginal Carian Caucasian_Albanian Chakma Cham Cherokee Chorasmian Coptic
  Cuneiform Cypriot Cypro_Minoan Cyrillic Deseret Devanagari Dives_Akuru Dogra Duployan Egyptian_Hieroglyphs Elbasan Elymaic
  Ethiopic Garay Georgian Glagolitic Gothic Grantha Greek Gujarati Gunjala_Gondi Gurmukhi Gurung_Khema Han Hangul
  Hanifi_Rohingya Hanunoo Hatran Hebrew Hiragana Imperial_Aramaic Inscriptional_Pahlavi Inscriptional_Parthian Javanese Kaithi
  Kannada Katakana Kawi Kayah_Li Kharoshthi Khitan_Small_Script Khmer Khojki Khudawadi Kirat_Rai Lao Latin Lepcha Limbu Linear_A
  Linear_B Lisu Lycian Lydian Mahajani Makasar Malayalam Mandaic Manichaean Marchen Masaram_Gondi Medefaidrin Meetei_Mayek
  Mende_Kikakui Meroitic_Cursive Meroitic_Hieroglyphs Miao Modi Mongolian Mro Multani Myanmar Nabataean Nag_Mundari Nandinagari
  New_Tai_Lue Newa Nko Nushu Nyiakeng_Puachue_Hmong Ogham Ol_Chiki Ol_Onal Old_Hungarian Old_Italic Old_North_Arabian Old_Permic
  Old_Persian Old_Sogdian Old_South_Arabian Old_Turkic Old_Uyghur Oriya Osage Osmanya Pahawh_Hmong Palmyrene Pau_Cin_Hau Phags_Pa
  Phoenician Psalter_Pahlavi Rejang Runic Samaritan Saurashtra Sharada Shavian Siddham SignWriting Sinhala Sogdian Sora_Sompeng
  Soyombo Sundanese Sunuwar Syloti_Nagri Syriac Tagalog Tagbanwa Tai_Le Tai_Tham Tai_Viet Takri Tamil Tangsa Tangut Telugu
  Thaana Thai Tibetan Tifinagh Tirhuta Todhri Toto Tulu_Tigalari Ugaritic Vai Vithkuqi Wancho Warang_Citi Yezidi Yi
  Zanabazar_Square`.split(/\s+/);

const SCRIPTS: [string, RegExp][] = SCRIPT_NAMES.flatMap((name): [string, RegExp][] => {
  try {
    return [[name, new RegExp(`^\\p{Script_Extensions=${name}}$`, 'u')]];
  } catch {
    return [];
  }
});

const LATIN = new Set(['Latin']);
const COMMON = /^[\p{Script_Extensions=Common}\p{Script_Extensions=Inherited}]$/u;

// UTS #39 augmented script sets: Japanese, Korean and Chinese writing legitimately mix Han with their own scripts.
const AUGMENT: Record<string, string[]> = {
  Han: ['Hanb', 'Jpan', 'Kore'],
  Hiragana: ['Jpan'],
  Katakana: ['Jpan'],
  Hangul: ['Kore'],
  Bopomofo: ['Hanb'],
};

/**
 * The augmented scripts one code point may belong to; undefined for Common and Inherited characters (digits, marks,
 * "-").
 */
function scriptsOf(char: string): Set<string> | undefined {
  if (COMMON.test(char)) return undefined;
  if (/^[A-Za-z]$/.test(char)) return LATIN;
  const names = SCRIPTS.filter(([, re]) => re.test(char)).flatMap(([name]) => [name, ...(AUGMENT[name] ?? [])]);
  // A character of a script this Node does not know stands alone: it mixes with nothing else.
  return new Set(names.length > 0 ? names : [`U+${char.codePointAt(0)!.toString(16)}`]);
}

/**
 * True when no single script covers every letter (UTS #39 resolved script set is empty), e.g. Latin "adm" + Cyrillic
 * "а".
 */
export function isMixedScript(value: string): boolean {
  let resolved: Set<string> | undefined;
  for (const char of value.normalize('NFD')) {
    const scripts = scriptsOf(char);
    if (!scripts) continue;
    resolved = resolved ? new Set([...resolved].filter((s) => scripts.has(s))) : scripts;
    if (resolved.size === 0) return true;
  }
  return false;
}
