/**
 * Shell for a snapshot's HTML. The server's conversion sanitises it to the note schema, but the
 * frame does not rely on that: `sandbox=""` runs no script and gives the content an opaque origin,
 * and the policy below loads nothing from anywhere (no remote images phoning home).
 */
function frameDocument(html: string): string {
  return `<!doctype html><html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<style>
  :root { color-scheme: light dark; font-family: system-ui, -apple-system, "Segoe UI", sans-serif; }
  body { margin: 0.75rem; line-height: 1.5; font-size: 0.92rem; }
  pre { white-space: pre-wrap; }
  ul[data-type="taskList"] { list-style: none; padding-left: 0.5rem; }
</style></head><body>${html}</body></html>`;
}

export function SnapshotPreviewFrame({ html }: { html: string }) {
  return <iframe className="snapshot-frame" title="Snapshot preview" sandbox="" srcDoc={frameDocument(html)} />;
}
