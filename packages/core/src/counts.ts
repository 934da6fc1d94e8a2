/**
 * A count with its noun in the right number: "1 note", "0 notes", "2 folders". One helper, so
 * every message the server or the desktop builds from a count agrees with it.
 */
export function countOf(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}
