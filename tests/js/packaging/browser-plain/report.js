// Runs the checks and leaves the outcome on window.__packaging for the test driver.
export async function report(run) {
  const out = document.getElementById("out");
  try {
    const summary = await run();
    window.__packaging = { ok: true, summary };
    out.textContent = `PACKAGING-OK ${JSON.stringify(summary)}`;
  } catch (e) {
    window.__packaging = { ok: false, error: String(e && e.stack ? e.stack : e) };
    out.textContent = `PACKAGING-FAIL ${window.__packaging.error}`;
  }
}
