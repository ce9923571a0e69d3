// Validates what intentgate's agent emitted with the schemas of
// @roo-code/types 1.63.0, and compares the Go ask/say lists and ask
// categories with the package's own arrays.
//
//   node check.mjs INPUT.json
//
// INPUT: {"messages":[ClineMessage...], "tokenUsage":{...},
//         "toolUsage":{...}, "commandStatuses":[CommandExecutionStatus...],
//         "lists":{"clineAsks":[...], ...}, "referenceTools":["read_file", ...]}
// Exit status 0 when everything conforms; otherwise each problem is printed.
import { readFileSync } from "node:fs"
import * as types from "@roo-code/types"

const input = JSON.parse(readFileSync(process.argv[2], "utf8"))
const problems = []

for (const [i, m] of (input.messages ?? []).entries()) {
  const r = types.clineMessageSchema.strict().safeParse(m)
  if (!r.success) problems.push(`message ${i} (${JSON.stringify(m).slice(0, 200)}): ${r.error.message}`)
}
if (input.tokenUsage !== undefined) {
  const r = types.tokenUsageSchema.strict().safeParse(input.tokenUsage)
  if (!r.success) problems.push(`tokenUsage: ${r.error.message}`)
}
if (input.toolUsage !== undefined) {
  const r = types.toolUsageSchema.safeParse(input.toolUsage)
  if (!r.success) problems.push(`toolUsage: ${r.error.message}`)
}

// A running command's statuses (commandExecutionStatusSchema).
for (const [i, s] of (input.commandStatuses ?? []).entries()) {
  const r = types.commandExecutionStatusSchema.safeParse(s)
  if (!r.success) problems.push(`command status ${i} (${JSON.stringify(s)}): ${r.error.message}`)
  else if (Object.keys(s).length !== Object.keys(r.data).length) problems.push(`command status ${i} (${JSON.stringify(s)}) has fields the schema lacks`)
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b)
const lists = input.lists ?? {}
if (input.lists !== undefined) {
for (const name of ["clineAsks", "clineSays", "idleAsks", "interactiveAsks", "resumableAsks"]) {
  if (!same(lists[name], [...types[name]])) {
    problems.push(`${name}: Go has ${JSON.stringify(lists[name])}, the package has ${JSON.stringify(types[name])}`)
  }
}
// 1.63.0 has no nonBlockingAsks; later versions define it. Compare when present.
if (types.nonBlockingAsks !== undefined && !same(lists.nonBlockingAsks, [...types.nonBlockingAsks])) {
  problems.push(`nonBlockingAsks: Go has ${JSON.stringify(lists.nonBlockingAsks)}, the package has ${JSON.stringify(types.nonBlockingAsks)}`)
}
// Every catalog tool reported as the reference's is one of the package's
// toolNames (the keys toolUsageSchema accepts).
for (const name of input.referenceTools ?? []) {
  if (!types.toolNames.includes(name)) problems.push(`referenceTools: ${name} is not one of the package's toolNames`)
}
// The category functions agree with the Go categories for every ask.
for (const ask of types.clineAsks) {
  const go = input.categories?.[ask] ?? {}
  for (const [fn, key] of [["isIdleAsk", "idle"], ["isInteractiveAsk", "interactive"], ["isResumableAsk", "resumable"]]) {
    if (types[fn](ask) !== Boolean(go[key])) problems.push(`${fn}(${ask}) = ${types[fn](ask)}, Go says ${Boolean(go[key])}`)
  }
}
}

const counted = (input.messages ?? []).length
if (problems.length > 0) {
  console.error(problems.join("\n"))
  process.exit(1)
}
console.log(`conform: ${counted} messages, token usage, tool usage, ask/say lists and categories`)
