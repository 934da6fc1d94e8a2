/** How a person the server names by principal id is shown: their name when known, else the id. */
export function personLabel(name: string | null, principalId: string): string {
  return name?.trim() ? name : `user ${principalId}`;
}
