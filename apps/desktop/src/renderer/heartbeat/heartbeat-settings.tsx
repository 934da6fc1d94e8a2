import { useId, useMemo } from "react";
import { ErrorNotice } from "../components/error-notice";
import { type SettingsForm, TIER_WORDS, TIERS, timeZones } from "./heartbeat-format";
import type { SaveState } from "./heartbeat-session";
import { useHeartbeatSession } from "./heartbeat-session";

/** This computer's time zone, offered first when the stored one is elsewhere. */
const HERE = Intl.DateTimeFormat().resolvedOptions().timeZone;

/**
 * The heartbeat's tier and schedule: off, or every N minutes or hours, with quiet hours in a time
 * zone. Edits stay a draft (kept across sections) until saved; the server checks them again.
 */
export function HeartbeatSettingsForm() {
  const heartbeat = useHeartbeatSession();
  const { form } = heartbeat;
  const ids = { tier: useId(), schedule: useId(), every: useId(), unit: useId(), quiet: useId(), zone: useId() };
  const zones = useMemo(() => timeZones(form?.timezone ?? "", HERE), [form?.timezone]);
  if (!form) return null;
  const edit = (change: Partial<SettingsForm>) => heartbeat.setForm({ ...form, ...change });
  const saving = heartbeat.settingsSave.status === "saving";
  const disabled = saving;

  return (
    <form
      className="heartbeat-settings"
      aria-label="Heartbeat settings"
      onSubmit={(event) => {
        event.preventDefault();
        heartbeat.saveSettings();
      }}
    >
      <fieldset disabled={disabled}>
        <legend>What it may do</legend>
        {TIERS.map((tier) => (
          <label key={tier} className="choice">
            <input type="radio" name={ids.tier} checked={form.tier === tier} onChange={() => edit({ tier })} />
            <span>
              <strong>{TIER_WORDS[tier].title}</strong>
              <span className="hint">{TIER_WORDS[tier].detail}</span>
            </span>
          </label>
        ))}
      </fieldset>

      <fieldset disabled={disabled}>
        <legend>When it runs</legend>
        <label className="choice">
          <input type="radio" name={ids.schedule} checked={!form.enabled} onChange={() => edit({ enabled: false })} />
          <span>Off: only when you click Run now</span>
        </label>
        <div className="choice">
          <input
            type="radio"
            id={ids.schedule}
            name={ids.schedule}
            checked={form.enabled}
            onChange={() => edit({ enabled: true })}
            aria-label="On a schedule"
          />
          <label htmlFor={ids.every}>Every</label>
          <input
            id={ids.every}
            className="every-input"
            type="number"
            inputMode="numeric"
            min={1}
            step={1}
            value={form.every}
            onChange={(event) => edit({ every: event.target.value, enabled: true })}
          />
          <select
            id={ids.unit}
            aria-label="Unit"
            value={form.unit}
            onChange={(event) => edit({ unit: event.target.value === "hours" ? "hours" : "minutes", enabled: true })}
          >
            <option value="minutes">minutes</option>
            <option value="hours">hours</option>
          </select>
        </div>
        <div className="choice quiet-hours">
          <input id={ids.quiet} type="checkbox" checked={form.quiet} onChange={(event) => edit({ quiet: event.target.checked })} />
          <label htmlFor={ids.quiet}>Quiet hours, no runs</label>
          <label>
            from{" "}
            <input
              type="time"
              aria-label="Quiet hours start"
              value={form.quietStart}
              disabled={!form.quiet}
              onChange={(event) => edit({ quietStart: event.target.value })}
            />
          </label>
          <label>
            to{" "}
            <input
              type="time"
              aria-label="Quiet hours end"
              value={form.quietEnd}
              disabled={!form.quiet}
              onChange={(event) => edit({ quietEnd: event.target.value })}
            />
          </label>
        </div>
        <div className="field zone-field">
          <label htmlFor={ids.zone}>Time zone (for quiet hours and "today")</label>
          <select id={ids.zone} value={form.timezone} onChange={(event) => edit({ timezone: event.target.value })}>
            {zones.map((zone) => (
              <option key={zone} value={zone}>
                {zone === HERE ? `${zone} (this computer)` : zone}
              </option>
            ))}
          </select>
        </div>
      </fieldset>

      <div className="heartbeat-save-row">
        <button type="submit" className="primary" disabled={!heartbeat.settingsDirty || saving || heartbeat.offline}>
          Save settings
        </button>
        {heartbeat.settingsDirty && !saving && (
          <button type="button" onClick={heartbeat.resetForm}>
            Undo changes
          </button>
        )}
        <SaveStatus state={heartbeat.settingsSave} dirty={heartbeat.settingsDirty} />
      </div>
      {heartbeat.settingsSave.status === "failed" && (
        <ErrorNotice message={`The settings were not saved: ${heartbeat.settingsSave.error}`} />
      )}
    </form>
  );
}

/** "Saving…", "Saved", or "Unsaved changes", beside a form's Save button. */
export function SaveStatus({ state, dirty }: { state: SaveState; dirty: boolean }) {
  const text = state.status === "saving" ? "Saving…" : dirty ? "Unsaved changes" : state.status === "saved" ? "Saved" : null;
  return (
    <span className="save-status" role="status" data-state={state.status === "saving" ? "saving" : dirty ? "dirty" : state.status}>
      {text}
    </span>
  );
}
