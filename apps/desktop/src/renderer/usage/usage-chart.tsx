import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from "chart.js";
import { useEffect, useRef } from "react";
import type { UsageGroupItem } from "../../shared/desktop-api";

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip);

/** The page's colours (styles.css's variables), so the chart follows the light and dark themes. */
function cssColor(name: string, fallback: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;
}

/**
 * Tokens in and out per group (models, sources) as stacked horizontal bars, drawn by Chart.js on a
 * canvas; the same figures are in the table beside it for screen readers and copying.
 */
export function TokensChart({ groups, label }: { groups: readonly UsageGroupItem[]; label: string }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const chart = useRef<Chart<"bar"> | null>(null);

  useEffect(() => {
    if (!canvas.current) return;
    const text = getComputedStyle(canvas.current).color || "#222";
    const accent = cssColor("--accent", "#3867d6");
    chart.current = new Chart(canvas.current, {
      type: "bar",
      data: { labels: [], datasets: [] },
      options: {
        indexAxis: "y",
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        scales: {
          x: { stacked: true, ticks: { color: text }, grid: { color: "rgba(127,127,127,0.2)" } },
          y: { stacked: true, ticks: { color: text } },
        },
        plugins: { legend: { labels: { color: text } } },
      },
    });
    chart.current.data.datasets = [
      { label: "Input tokens", data: [], backgroundColor: accent },
      { label: "Output tokens", data: [], backgroundColor: "#e58e26" },
    ];
    return () => {
      chart.current?.destroy();
      chart.current = null;
    };
  }, []);

  useEffect(() => {
    const current = chart.current;
    if (!current) return;
    current.data.labels = groups.map((group) => group.name);
    const [input, output] = current.data.datasets;
    if (input) input.data = groups.map((group) => group.tokensIn);
    if (output) output.data = groups.map((group) => group.tokensOut);
    current.update();
  }, [groups]);

  return (
    <div className="usage-chart" style={{ height: `${Math.max(90, 40 + groups.length * 32)}px` }}>
      <canvas ref={canvas} role="img" aria-label={label} />
    </div>
  );
}
