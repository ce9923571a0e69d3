// The least a hook can do: read the event's JSON on stdin and answer with
// JSON on stdout. The baseline for `intentgate hook claude-code`.
let raw = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => (raw += chunk));
process.stdin.on("end", () => {
  const event = JSON.parse(raw);
  process.stdout.write(
    JSON.stringify({ hookSpecificOutput: { hookEventName: event.hook_event_name, additionalContext: "" } }) + "\n",
  );
});
