// A node-ipc client that drives one real intentgate agent task, the way
// Roo Code's own IPC clients do: it starts the task, answers each ask it is
// given an answer for with SendMessage, and follows the events until
// taskCompleted; then it closes the task and waits for taskAborted. Every
// message either way is checked with @roo-code/types' zod schemas (1.63.0;
// SendMessage, which 1.63.0 lacks, with the later version that defines it).
//
// Usage: node agent.mjs SOCKET TASK_TEXT ANSWERS_JSON
// ANSWERS_JSON maps an ask type ("tool", "followup") to the text sent.
// Prints one JSON line {"clientId", "taskId", "events", "answered",
// "messages"} and exits 0; exits 1 on the first invalid message.
import { createRequire } from "node:module"
import ipc from "node-ipc"

const require = createRequire(import.meta.url)
const roo = require("@roo-code/types")
const next = require("roo-code-types-next")

const [socketPath, taskText, answersJSON] = process.argv.slice(2)
const answers = JSON.parse(answersJSON)
const fail = (why, detail) => {
	console.error(JSON.stringify({ error: why, detail }))
	process.exit(1)
}
setTimeout(() => fail("timeout: no taskCompleted", { events }), 60000).unref()

const check = (schema, value, what) => {
	const r = schema.safeParse(value)
	if (!r.success) fail(`${what} does not validate`, { issues: r.error.issues, value })
	return r.data
}

ipc.config.silent = true
ipc.config.maxRetries = 0

const id = "intentgate-agent"
let clientId
let taskId
let completed = false
const events = []
const answered = []
const messages = []
const seenAsks = new Set()

const send = (message, schema = roo.ipcMessageSchema) => {
	check(schema, message, "outgoing message")
	ipc.of[id].emit("message", message)
}

ipc.connectTo(id, socketPath, () => {
	ipc.of[id].on("error", (err) => fail("socket error", String(err)))
	ipc.of[id].on("message", (data) => {
		const msg = check(roo.ipcMessageSchema, data, "incoming message")
		if (msg.origin !== roo.IpcOrigin.Server) fail("a server message with origin " + msg.origin)
		if (msg.type === roo.IpcMessageType.Ack) {
			check(roo.ackSchema, msg.data, "Ack")
			if (clientId) fail("a second Ack")
			clientId = msg.data.clientId
			start()
			return
		}
		if (msg.type !== roo.IpcMessageType.TaskEvent) fail("unexpected message type " + msg.type)
		if (!clientId) fail("a TaskEvent before the Ack")
		const ev = check(roo.taskEventSchema, msg.data, "TaskEvent data")
		events.push(ev.eventName)
		switch (ev.eventName) {
			case roo.RooCodeEventName.TaskCreated:
				if (taskId) fail("a second task was created", ev)
				taskId = ev.payload[0]
				break
			case roo.RooCodeEventName.Message: {
				const { message } = ev.payload[0]
				check(roo.clineMessageSchema, message, "ClineMessage")
				if (message.partial) break
				messages.push({ type: message.type, ask: message.ask, say: message.say })
				if (message.type === "say" && message.say === "error") fail("the server reported an error", message.text)
				if (message.type !== "ask" || seenAsks.has(message.ts)) break
				seenAsks.add(message.ts)
				const text = answers[message.ask]
				if (text === undefined) break
				answered.push(message.ask)
				send(
					{
						type: next.IpcMessageType.TaskCommand,
						origin: next.IpcOrigin.Client,
						clientId,
						data: { commandName: next.TaskCommandName.SendMessage, data: { text } },
					},
					next.ipcMessageSchema,
				)
				break
			}
			case roo.RooCodeEventName.TaskCompleted: {
				const [doneId, usage, tools, extra] = ev.payload
				if (doneId !== taskId) fail("taskCompleted for another task", ev)
				check(roo.tokenUsageSchema, usage, "token usage")
				check(roo.toolUsageSchema, tools, "tool usage")
				if (typeof extra.isSubtask !== "boolean") fail("isSubtask missing")
				completed = true
				// The task now waits on its completion ask; an unattended
				// client closes it.
				send({
					type: roo.IpcMessageType.TaskCommand,
					origin: roo.IpcOrigin.Client,
					clientId,
					data: { commandName: roo.TaskCommandName.CloseTask, data: taskId },
				})
				break
			}
			case roo.RooCodeEventName.TaskAborted:
				if (!completed) fail("taskAborted before taskCompleted", { events, messages })
				console.log(JSON.stringify({ clientId, taskId, events, answered, messages }))
				ipc.disconnect(id)
				process.exit(0)
		}
	})
})

function start() {
	send({
		type: roo.IpcMessageType.TaskCommand,
		origin: roo.IpcOrigin.Client,
		clientId,
		data: {
			commandName: roo.TaskCommandName.StartNewTask,
			data: {
				configuration: {
					apiProvider: "anthropic",
					apiModelId: "claude-sonnet-4-20250514",
					mode: "code",
					autoApprovalEnabled: true,
					alwaysAllowReadOnly: true,
					alwaysAllowWrite: false,
				},
				text: taskText,
				newTab: false,
			},
		},
	})
}
