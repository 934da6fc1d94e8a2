/**
 * English words that carry no meaning on their own ("what are my goals" is about goals). One list
 * for search, summaries and the `local` agent: PostgreSQL's English list (Snowball's), so both
 * databases drop the same words from a query, plus auxiliaries and the pieces contractions split
 * into ("I'm", "we'll"). Other languages are not filtered; they still rank by frequency.
 */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    "i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers herself it its " +
    "itself they them their theirs themselves what which who whom this that these those am is are was were be been being " +
    "have has had having do does did doing a an the and but if or because as until while of at by for with about against " +
    "between into through during before after above below to from up down in out on off over under again further then once " +
    "here there when where why how all any both each few more most other some such no nor not only own same so than too " +
    "very s t can will just don should now " +
    "could would shall might must ought also please ll re ve d m get got one two yet still may let lets via etc"
  ).split(" "),
);
