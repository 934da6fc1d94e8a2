import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useRef, useState } from "react";
import type { DesktopApi, HeartbeatChecklist, HeartbeatOverview, HeartbeatRunDetail } from "../../shared/desktop-api";
import { errorMessage } from "../components/error-message";
import { useHostStatus } from "../layout/host-status";
import type { Loaded } from "../today/briefing-session";
import { formOf, type SettingsForm, sameForm, settingsOf } from "./heartbeat-format";

/** A save in flight, done, or refused (with the reason in words). */
export type SaveState = { readonly status: "idle" | "saving" | "saved" } | { readonly status: "failed"; readonly error: string };

export interface HeartbeatSession {
  readonly offline: boolean;
  /** The tier, the schedule and how the runs are going, as the server last said. */
  readonly overview: Loaded<HeartbeatOverview>;
  /** The settings form: the owner's unsaved edits, else the server's settings; null until loaded. */
  readonly form: SettingsForm | null;
  readonly settingsDirty: boolean;
  readonly settingsSave: SaveState;
  setForm(form: SettingsForm): void;
  resetForm(): void;
  saveSettings(): void;

  /** The checklist as the server has it. */
  readonly checklist: Loaded<HeartbeatChecklist>;
  /** What the editor shows: the owner's unsaved text, else the server's. */
  readonly checklistText: string;
  readonly checklistDirty: boolean;
  readonly checklistSave: SaveState;
  setChecklistText(text: string): void;
  revertChecklist(): void;
  saveChecklist(): void;

  /** A run asked for here and not answered yet. */
  readonly running: { readonly dryRun: boolean; readonly since: number } | null;
  /** The answer to the last run asked for here. */
  readonly lastResult: HeartbeatRunDetail | null;
  readonly runError: string | null;
  run(dryRun: boolean): void;
  /** Moves when the history is worth asking for again (a run ended). */
  readonly runsGeneration: number;

  /** Edits not on the server yet: the sidebar marks them and leaving the page asks first. */
  readonly unsaved: boolean;
  /** The Heartbeat view is on screen while attached: what is missing (or failed) is loaded. Answers the detach. */
  attach(): () => void;
  reload(): void;
}

const HeartbeatContext = createContext<HeartbeatSession | null>(null);

const UNSAVED_WORK = "Your heartbeat settings or checklist have changes that are not saved.";

/**
 * The Heartbeat section's state, kept above the sections (and above the sidebar, which marks
 * unsaved edits): the checklist being written and the settings being changed survive a look at
 * another section, and a run asked for goes on meanwhile. Everything else is the server's.
 */
export function HeartbeatSessionProvider({ api, children }: { api: DesktopApi; children: ReactNode }) {
  const offline = useHostStatus().status?.sync.state === "offline";
  const [overview, setOverview] = useState<Loaded<HeartbeatOverview>>({ status: "idle" });
  const [formDraft, setFormDraft] = useState<SettingsForm | null>(null);
  const [settingsSave, setSettingsSave] = useState<SaveState>({ status: "idle" });
  const [checklist, setChecklist] = useState<Loaded<HeartbeatChecklist>>({ status: "idle" });
  const [checklistDraft, setChecklistDraft] = useState<string | null>(null);
  const [checklistSave, setChecklistSave] = useState<SaveState>({ status: "idle" });
  const [running, setRunning] = useState<HeartbeatSession["running"]>(null);
  const [lastResult, setLastResult] = useState<HeartbeatRunDetail | null>(null);
  const [runError, setRunError] = useState<string | null>(null);
  const [runsGeneration, setRunsGeneration] = useState(0);
  // Refs for what callbacks read at the moment they run.
  const state = useRef({ overview, checklist, formDraft, checklistDraft, offline });
  state.current = { overview, checklist, formDraft, checklistDraft, offline };
  const busy = useRef({ run: false, settings: false, checklist: false });

  const loadOverview = useCallback(() => {
    setOverview((current) => (current.status === "ready" ? current : { status: "loading" }));
    api.getHeartbeat().then(
      (value) => setOverview({ status: "ready", value }),
      (error: unknown) =>
        // A refresh that fails keeps what is shown; only a first load shows the failure.
        setOverview((current) => (current.status === "ready" ? current : { status: "failed", message: errorMessage(error) })),
    );
  }, [api]);

  const loadChecklist = useCallback(() => {
    setChecklist({ status: "loading" });
    api.getHeartbeatChecklist().then(
      (value) => setChecklist({ status: "ready", value }),
      (error: unknown) => setChecklist({ status: "failed", message: errorMessage(error) }),
    );
  }, [api]);

  const reload = useCallback(() => {
    if (state.current.offline) return;
    const { overview: shownOverview, checklist: shownChecklist } = state.current;
    if (shownOverview.status !== "loading") loadOverview();
    if (shownChecklist.status === "idle" || shownChecklist.status === "failed") loadChecklist();
  }, [loadOverview, loadChecklist]);

  const visible = useRef(false);
  const attach = useCallback(() => {
    visible.current = true;
    reload();
    return () => {
      visible.current = false;
    };
  }, [reload]);

  // Back online: what could not be loaded is asked for again (if shown).
  const wasOffline = useRef(offline);
  useEffect(() => {
    if (wasOffline.current && !offline && visible.current) reload();
    wasOffline.current = offline;
  }, [offline, reload]);

  const serverSettings = overview.status === "ready" ? overview.value.settings : null;
  const serverForm = useMemo(() => (serverSettings ? formOf(serverSettings) : null), [serverSettings]);
  const form = formDraft ?? serverForm;
  const settingsDirty = formDraft !== null && serverForm !== null && !sameForm(formDraft, serverForm);

  const setForm = useCallback((next: SettingsForm) => {
    setFormDraft(next);
    setSettingsSave({ status: "idle" });
  }, []);
  const resetForm = useCallback(() => {
    setFormDraft(null);
    setSettingsSave({ status: "idle" });
  }, []);

  const saveSettings = useCallback(() => {
    const draft = state.current.formDraft;
    if (!draft || busy.current.settings || state.current.offline) return;
    const checked = settingsOf(draft);
    if ("problem" in checked) {
      setSettingsSave({ status: "failed", error: checked.problem });
      return;
    }
    busy.current.settings = true;
    setSettingsSave({ status: "saving" });
    api.saveHeartbeatSettings(checked.settings).then(
      (settings) => {
        busy.current.settings = false;
        setOverview((current) => (current.status === "ready" ? { status: "ready", value: { ...current.value, settings } } : current));
        // Edits made while it was saved stay a draft.
        setFormDraft((current) => (current === draft ? null : current));
        setSettingsSave({ status: "saved" });
        // When the next run is due follows from the new schedule.
        loadOverview();
      },
      (error: unknown) => {
        busy.current.settings = false;
        setSettingsSave({ status: "failed", error: errorMessage(error) });
      },
    );
  }, [api, loadOverview]);

  const serverChecklist = checklist.status === "ready" ? checklist.value.content : "";
  const checklistText = checklistDraft ?? serverChecklist;
  const checklistDirty = checklistDraft !== null && checklistDraft !== serverChecklist;

  const setChecklistText = useCallback((text: string) => {
    setChecklistDraft(text);
    setChecklistSave({ status: "idle" });
  }, []);
  const revertChecklist = useCallback(() => {
    setChecklistDraft(null);
    setChecklistSave({ status: "idle" });
  }, []);

  const saveChecklist = useCallback(() => {
    const content = state.current.checklistDraft;
    if (content === null || busy.current.checklist || state.current.offline) return;
    busy.current.checklist = true;
    setChecklistSave({ status: "saving" });
    api.saveHeartbeatChecklist({ content }).then(
      (value) => {
        busy.current.checklist = false;
        setChecklist({ status: "ready", value });
        setChecklistDraft((current) => (current === content ? null : current));
        setChecklistSave({ status: "saved" });
      },
      (error: unknown) => {
        busy.current.checklist = false;
        // The text stays in the editor, with the reason.
        setChecklistSave({ status: "failed", error: errorMessage(error) });
      },
    );
  }, [api]);

  const run = useCallback(
    (dryRun: boolean) => {
      if (busy.current.run || state.current.offline) return;
      busy.current.run = true;
      setRunning({ dryRun, since: Date.now() });
      setRunError(null);
      api.runHeartbeat({ dryRun }).then(
        (result) => {
          busy.current.run = false;
          setRunning(null);
          setLastResult(result);
          setRunsGeneration((generation) => generation + 1);
          loadOverview();
        },
        (error: unknown) => {
          busy.current.run = false;
          setRunning(null);
          setRunError(errorMessage(error));
          // A run that failed on the server is in the history too.
          setRunsGeneration((generation) => generation + 1);
        },
      );
    },
    [api, loadOverview],
  );

  const unsaved = settingsDirty || checklistDirty;
  useUnsavedWorkWarning(api, unsaved);

  const session = useMemo<HeartbeatSession>(
    () => ({
      offline,
      overview,
      form,
      settingsDirty,
      settingsSave,
      setForm,
      resetForm,
      saveSettings,
      checklist,
      checklistText,
      checklistDirty,
      checklistSave,
      setChecklistText,
      revertChecklist,
      saveChecklist,
      running,
      lastResult,
      runError,
      run,
      runsGeneration,
      unsaved,
      attach,
      reload,
    }),
    [
      offline,
      overview,
      form,
      settingsDirty,
      settingsSave,
      setForm,
      resetForm,
      saveSettings,
      checklist,
      checklistText,
      checklistDirty,
      checklistSave,
      setChecklistText,
      revertChecklist,
      saveChecklist,
      running,
      lastResult,
      runError,
      run,
      runsGeneration,
      unsaved,
      attach,
      reload,
    ],
  );
  return <HeartbeatContext.Provider value={session}>{children}</HeartbeatContext.Provider>;
}

/**
 * Leaving the page with unsaved edits asks first: the browser's own question on a reload or a
 * closed tab, and Electron's main (told through the host) before quitting.
 */
function useUnsavedWorkWarning(api: DesktopApi, unsaved: boolean): void {
  useEffect(() => {
    const ignore = () => {};
    // Also said when nothing is unsaved: a page reloaded after an edit starts clean.
    void api.setUnsavedWork({ description: unsaved ? UNSAVED_WORK : null }).catch(ignore);
    if (!unsaved) return;
    const onBeforeUnload = (event: BeforeUnloadEvent) => {
      event.preventDefault();
      // Older browsers ask only when this is set.
      event.returnValue = "";
    };
    window.addEventListener("beforeunload", onBeforeUnload);
    return () => window.removeEventListener("beforeunload", onBeforeUnload);
  }, [api, unsaved]);
}

export function useHeartbeatSession(): HeartbeatSession {
  const session = useContext(HeartbeatContext);
  if (!session) throw new Error("useHeartbeatSession outside HeartbeatSessionProvider");
  return session;
}
