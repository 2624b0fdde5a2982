// What the client scripts share: failed checks are collected, a step that throws is one failure
// (the next steps still run), and the end prints them and sets the exit status.
//   import { check, attempt, finishChecks } from "./checks.mjs";
//   check(r.ok, "what should hold");
//   await attempt("a step", async () => { ... });
//   finishChecks("clients: all checks passed");  // exit 1 with every failure when some failed
const failures = [];

export const check = (cond, what) => { if (!cond) failures.push(what); };

export const attempt = async (what, f) => {
  try {
    await f();
  } catch (e) {
    failures.push(`${what}: ${e && e.message ? e.message : e}`);
  }
};

export const finishChecks = (passed) => {
  if (failures.length) {
    console.error("failed: " + failures.join("; "));
    process.exit(1);
  }
  console.log(passed);
};
