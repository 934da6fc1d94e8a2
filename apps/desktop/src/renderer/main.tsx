// First, for its effect: the page's first request goes out before the rest of the app is evaluated.
import "./page-start";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { AppShell } from "./app-shell";
import { earlyCallsAnswered } from "./early-calls";
import { pageApi } from "./page-start";
import "./styles.css";

/** How long the first frame waits for the host's first answers before it says "Starting…" instead. */
const FIRST_FRAME_MAX_WAIT_MS = 500;

const container = document.getElementById("root");
if (!container) throw new Error("index.html lacks the #root element");
const root = createRoot(container);
// The first frame waits (briefly) for the host's first answers: with them it is the first screen itself.
void earlyCallsAnswered(FIRST_FRAME_MAX_WAIT_MS).then(() =>
  root.render(
    <StrictMode>
      <AppShell api={pageApi} />
    </StrictMode>,
  ),
);
