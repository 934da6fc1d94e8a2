import { type ComponentType, type LazyExoticComponent, lazy } from "react";
import { ErrorNotice } from "./error-notice";

/**
 * A component whose code is a chunk of its own, fetched when first shown (render it inside
 * `<Suspense>`): the page starts, and shows its first screen, without compiling and running code for
 * what is not on it.
 */
export function lazyView<P extends object>(load: () => Promise<ComponentType<P>>): LazyExoticComponent<ComponentType<P>> {
  return lazy(() =>
    load().then(
      (component) => ({ default: component }),
      // Only if the app's own files went missing (web mode rebuilt under an open page): said, not a blank window.
      () => ({ default: Unavailable as ComponentType<P> }),
    ),
  );
}

function Unavailable() {
  return <ErrorNotice message="This part of Tandem could not be loaded. Reload the window (Ctrl+R or Cmd+R) to try again." />;
}

/** Shown in place of a view whose code is still loading (a moment, the first time). */
export function LoadingView() {
  return (
    <p className="empty-state" aria-busy="true">
      Loading…
    </p>
  );
}
