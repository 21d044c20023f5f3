/**
 * Says which Node runs the tests, first thing in the run, so a log shows it before any result
 * (test/unit/runtime.test.ts fails the run when it is not the pinned Node 24).
 */
export default function setup(): void {
  process.stderr.write(`[runtime] Node.js ${process.version} (${process.execPath})\n`);
}
