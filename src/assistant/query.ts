/**
 * A reader's question as a search query (pure): the words that carry its subject. The local
 * search ranks pages by the words they share with the query and wants all of them first, so a
 * question's function words ("how do I … the …") would make every page equal or none match. Only
 * English function words are dropped (the export's own language is unknown; words of other
 * languages are all kept); a question made only of them is asked as it is.
 */
const FUNCTION_WORDS = new Set(
  (
    'a an the and or but if then else of to in on at by for from with without into onto about over under as is are was were be been being ' +
    'do does did doing done have has had having can could should would will shall may might must i me my we our you your it its they them their ' +
    'he she his her this that these those there here what which who whom whose when where why how whether not no yes so than too very ' +
    'just also any some each every all both either neither other another such own same more most less least much many few one ones ' +
    'get gets got make makes use using used want wants need needs way ways thing things something anything please tell show explain ' +
    'let lets like up out off again only still even ever'
  ).split(' '),
);

export function searchQuery(question: string): string {
  const words = question.match(/[\p{L}\p{N}_][\p{L}\p{N}_.'’-]*/gu) ?? [];
  // a possessive's `'s` is no word of its own (`system's` → `system`)
  const kept = words.map((w) => w.replace(/['’]s$/i, '')).filter((w) => !FUNCTION_WORDS.has(w.toLowerCase()));
  return (kept.length > 0 ? kept : words).join(' ');
}
