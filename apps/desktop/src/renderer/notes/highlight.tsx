/**
 * Matches of the query's words in a piece of text, shown as `<mark>` (case-insensitive; a word
 * also marks longer words it begins or sits in, as stemming and prefix search find them). Plain
 * React text around the marks: the text is untrusted and never becomes HTML.
 */
export function Highlighted({ text, query }: { text: string; query: string }) {
  const words = [...new Set(query.toLocaleLowerCase().split(/\s+/).filter(Boolean))].sort((a, b) => b.length - a.length);
  if (words.length === 0) return <>{text}</>;
  const pattern = new RegExp(`(${words.map((word) => word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|")})`, "giu");
  const parts = text.split(pattern);
  return (
    <>
      {parts.map((part, index) =>
        // split() with one capturing group puts the matches at the odd indexes.
        index % 2 === 1 ? <mark key={index}>{part}</mark> : part,
      )}
    </>
  );
}
