import { makeEarlyCalls } from "./early-calls";
import { createWebDesktopApi } from "./web-desktop-api";

/**
 * The page's first step. main.tsx imports this module before anything else, and a bundle runs its
 * modules in import order, so this runs before the rest of the app's code is evaluated (a few hundred
 * ms on a slow machine): meanwhile the host answers the calls the first screen waits for.
 */

// Under Electron the preload has installed the API; in a browser, web mode serves it over HTTP.
export const pageApi = window.tandem ?? createWebDesktopApi();
makeEarlyCalls(pageApi);
