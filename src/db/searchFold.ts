import type { Database } from 'better-sqlite3';

/**
 * The letters the SQLite search index folds before FTS5 sees them (issue 15: case- and
 * diacritics-insensitive; issue 17: the same hits on both stores). FTS5's `unicode61
 * remove_diacritics 2` only strips marks Unicode decomposes off a letter, so "Røyksopp", "Łódź",
 * "Straße", "Æther" and "ﬁ" keep letters PostgreSQL's `unaccent` spells out (O, L, ss, AE, fi).
 * This is the one definition of that mapping: every rule of PostgreSQL 15's default
 * `unaccent.rules` whose source is a letter that unicode61 does not already fold the same way
 * (test/db/searchFold.test.ts checks it against the server's `unaccent` over every letter of the
 * BMP, and shows the table it expects when they differ). Rules whose source is not a letter (`©`,
 * `½`, dashes) are left out: unicode61 cuts words at them or keeps them as numbers. The JS writers
 * and the query fold with
 * {@link foldSearchText}; SQL that reads columns out of stored lines calls {@link SEARCH_FOLD_SQL}.
 */

// Each entry: the source letter, then what unaccent writes for it (never a space).
const RULES =
  "ÆAE ÐD ØO ÞTH ßss æae ðd øo þth ĐD đd ĦH ħh ıi ĲIJ ĳij ĸq ĿL ŀl ŁL łl ŉ'n ŊN ŋn ŒOE œoe ŦT " +
  'ŧt ƀb ƁB ƂB ƃb ƇC ƈc ƉD ƊD ƋD ƌd ƐE ƑF ƒf ƓG ƕhv ƖI ƗI ƘK ƙk ƚl ƝN ƞn ƢOI ƣoi ƤP ƥp ƫt ƬT ' +
  'ƭt ƮT ƲV ƳY ƴy ƵZ ƶz ǄDZ ǅDz ǆdz ǇLJ ǈLj ǉlj ǊNJ ǋNj ǌnj ǠA ǡa ǤG ǥg ǱDZ ǲDz ǳdz ȡd ȤZ ȥz ' +
  'ȴl ȵn ȶt ȷj ȸdb ȹqp ȺA ȻC ȼc ȽL ȾT ȿs ɀz ɃB ɄU ɆE ɇe ɈJ ɉj ɌR ɍr ɎY ɏy ɓb ɕc ɖd ɗd ɛe ɟj ' +
  'ɠg ɡg ɢG ɦh ɧh ɨi ɪI ɫl ɬl ɭl ɱm ɲn ɳn ɴN ɶOE ɼr ɽr ɾr ʀR ʂs ʈt ʉu ʋv ʏY ʐz ʑz ʙB ʛG ʜH ʝj ' +
  "ʟL ʠq ʣdz ʥdz ʦts ʪls ʫlz ʹ' ʺ\" ʻ' ʼ' ʽ' ˆ^ ˈ' ˋ` ː: ΆΑ ΈΕ ΉΗ ΊΙ ΌΟ ΎΥ ΏΩ ΐι ΪΙ ΫΥ άα έε " +
  'ήη ίι ΰυ ϊι ϋυ όο ύυ ώω ЁЕ ёе ᴀA ᴁAE ᴃB ᴄC ᴅD ᴆD ᴇE ᴊJ ᴋK ᴌL ᴍM ᴏO ᴘP ᴛT ᴜU ᴠV ᴡW ᴢZ ᵫue ' +
  'ᵬb ᵭd ᵮf ᵯm ᵰn ᵱp ᵲr ᵳr ᵴs ᵵt ᵶz ᵺth ᵻI ᵽp ᵾU ᶀb ᶁd ᶂf ᶃg ᶄk ᶅl ᶆm ᶇn ᶈp ᶉr ᶊs ᶌv ᶍx ᶎz ᶏa ' +
  'ᶑd ᶒe ᶓe ᶖi ᶙu ẚa ẜs ẝs ẞSS ỺLL ỻll ỼV ỽv ỾY ỿy ἀα ἁα ἂα ἃα ἄα ἅα ἆα ἇα ἈΑ ἉΑ ἊΑ ἋΑ ἌΑ ἍΑ ' +
  'ἎΑ ἏΑ ἐε ἑε ἒε ἓε ἔε ἕε ἘΕ ἙΕ ἚΕ ἛΕ ἜΕ ἝΕ ἠη ἡη ἢη ἣη ἤη ἥη ἦη ἧη ἨΗ ἩΗ ἪΗ ἫΗ ἬΗ ἭΗ ἮΗ ἯΗ ' +
  'ἰι ἱι ἲι ἳι ἴι ἵι ἶι ἷι ἸΙ ἹΙ ἺΙ ἻΙ ἼΙ ἽΙ ἾΙ ἿΙ ὀο ὁο ὂο ὃο ὄο ὅο ὈΟ ὉΟ ὊΟ ὋΟ ὌΟ ὍΟ ὐυ ὑυ ' +
  'ὒυ ὓυ ὔυ ὕυ ὖυ ὗυ ὙΥ ὛΥ ὝΥ ὟΥ ὠω ὡω ὢω ὣω ὤω ὥω ὦω ὧω ὨΩ ὩΩ ὪΩ ὫΩ ὬΩ ὭΩ ὮΩ ὯΩ ὰα ὲε ὴη ὶι ' +
  'ὸο ὺυ ὼω ᾀα ᾁα ᾂα ᾃα ᾄα ᾅα ᾆα ᾇα ᾈΑ ᾉΑ ᾊΑ ᾋΑ ᾌΑ ᾍΑ ᾎΑ ᾏΑ ᾐη ᾑη ᾒη ᾓη ᾔη ᾕη ᾖη ᾗη ᾘΗ ᾙΗ ᾚΗ ' +
  'ᾛΗ ᾜΗ ᾝΗ ᾞΗ ᾟΗ ᾠω ᾡω ᾢω ᾣω ᾤω ᾥω ᾦω ᾧω ᾨΩ ᾩΩ ᾪΩ ᾫΩ ᾬΩ ᾭΩ ᾮΩ ᾯΩ ᾰα ᾱα ᾲα ᾳα ᾴα ᾶα ᾷα ᾸΑ ᾹΑ ' +
  'ᾺΑ ᾼΑ ῂη ῃη ῄη ῆη ῇη ῈΕ ῊΗ ῌΗ ῐι ῑι ῒι ῖι ῗι ῘΙ ῙΙ ῚΙ ῠυ ῡυ ῢυ ῤρ ῥρ ῦυ ῧυ ῨΥ ῩΥ ῪΥ ῬΡ ῲω ' +
  'ῳω ῴω ῶω ῷω ῸΟ ῺΩ ῼΩ ℂC ℊg ℋH ℌx ℍH ℎh ℐI ℑI ℒL ℓl ℕN ℙP ℚQ ℛR ℜR ℝR ℤZ ℨZ ℬB ℭC ℯe ℰE ℱF ' +
  'ℳM ℴo ℹi ⅅD ⅆd ⅇe ⅈi ⅉj ⱠL ⱡl ⱢL ⱣP ⱤR ⱥa ⱦt ⱧH ⱨh ⱩK ⱪk ⱫZ ⱬz ⱮM ⱱv ⱲW ⱳw ⱴv ⱸe ⱺo ⱾS ⱿZ ' +
  'ꜰF ꜱS ꜲAA ꜳaa ꜴAO ꜵao ꜶAU ꜷau ꜸAV ꜹav ꜺAV ꜻav ꜼAY ꜽay ꝀK ꝁk ꝂK ꝃk ꝄK ꝅk ꝆL ꝇl ꝈL ꝉl ꝊO ꝋo ' +
  'ꝌO ꝍo ꝎOO ꝏoo ꝐP ꝑp ꝒP ꝓp ꝔP ꝕp ꝖQ ꝗq ꝘQ ꝙq ꝞV ꝟv ꝠVY ꝡvy ꝤTH ꝥth ꝦTH ꝧth ꝱd ꝲl ꝳm ꝴn ꝵr ' +
  'ꝶR ꝷt ꝹD ꝺd ꝻF ꝼf ꞆT ꞇt ꞐN ꞑn ꞒC ꞓc ꞠG ꞡg ꞢK ꞣk ꞤN ꞥn ꞦR ꞧr ꞨS ꞩs ꞪH ﬀff ﬁfi ﬂfl ﬃffi ﬄffl ' +
  'ﬅst ﬆst ＡA ＢB ＣC ＤD ＥE ＦF ＧG ＨH ＩI ＪJ ＫK ＬL ＭM ＮN ＯO ＰP ＱQ ＲR ＳS ＴT ＵU ＶV ＷW ＸX ＹY ＺZ ａa ' +
  'ｂb ｃc ｄd ｅe ｆf ｇg ｈh ｉi ｊj ｋk ｌl ｍm ｎn ｏo ｐp ｑq ｒr ｓs ｔt ｕu ｖv ｗw ｘx ｙy ｚz ';

const MAP = new Map<string, string>();
for (const entry of RULES.split(' ')) {
  if (entry === '') continue;
  const source = String.fromCodePoint(entry.codePointAt(0)!);
  MAP.set(source, entry.slice(source.length));
}

// Every source is a letter, never a character with a meaning inside a class (`]`, `\`, `^`, `-`).
const LETTERS = [...MAP.keys()].join('');
// One test of a precompiled class: most names hold none of these letters, and the ingest's hot
// path (sync/ingest.ts) then pays this test alone.
const ANY = new RegExp(`[${LETTERS}]`, 'u');
const EVERY = new RegExp(`[${LETTERS}]`, 'gu');
const spell = (letter: string) => MAP.get(letter)!;

/** The letters {@link foldSearchText} replaces, with what it writes for each (tests, docs). */
export const SEARCH_FOLD_RULES: ReadonlyMap<string, string> = MAP;

/** `text` with each letter of {@link SEARCH_FOLD_RULES} spelt as PostgreSQL's `unaccent` spells it. */
export function foldSearchText(text: string): string {
  return ANY.test(text) ? text.replace(EVERY, spell) : text;
}

/** {@link foldSearchText} for any column value: SQLite's JSON functions also give numbers and null. */
export function foldSearchValue<T>(value: T): T | string {
  return typeof value === 'string' ? foldSearchText(value) : value;
}

/** The SQL function of {@link foldSearchValue} (drizzle/sqlite/0012_search_fold.sql, db/searchIndex.ts). */
export const SEARCH_FOLD_SQL = 'livefeed_fold';

/**
 * Registers {@link SEARCH_FOLD_SQL} on a connection. db/client.ts does it on every connection it
 * opens, before the migrations: the migration that folds an existing index and the writers'
 * statements that read columns from stored lines call it.
 */
export function registerSearchFold(db: Database): void {
  // safeIntegers: an integer comes in as a BigInt and goes back an integer; as a JS number it would
  // come back a REAL, and FTS5 would index `42` as the words 42 and 0.
  db.function(SEARCH_FOLD_SQL, { deterministic: true, safeIntegers: true }, foldSearchValue);
}
