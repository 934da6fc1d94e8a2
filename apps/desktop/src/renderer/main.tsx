import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { AppShell } from "./app-shell";
import { prefetchWorkspaceOutline } from "./notes/use-first-view";
import { createWebDesktopApi } from "./web-desktop-api";
import "./styles.css";

// Under Electron the preload has installed the API; in a browser, web mode serves it over HTTP.
const api = window.tandem ?? createWebDesktopApi();
// The notes view's first view, asked for at once (a signed-out start gets none).
prefetchWorkspaceOutline(api);

const container = document.getElementById("root");
if (!container) throw new Error("index.html lacks the #root element");
createRoot(container).render(
  <StrictMode>
    <AppShell api={api} />
  </StrictMode>,
);
