// A client of intentgate's IPC server written the way Roo Code's own client
// is: node-ipc for the wire, @roo-code/types for the messages. Every message
// either way is checked with the package's zod schemas. SendMessage is not in
// 1.63.0, so that one command is checked with the later package version that
// defines it.
//
// Usage: node client.mjs SOCKET TASK_TEXT ANSWER
// Starts a task, answers its follow-up question, waits for taskCompleted;
// then starts a second task and cancels it, waiting for taskAborted. Prints
// one JSON line {"clientId", "taskId", "events": [...]} and exits 0; exits 1
// on the first invalid message.
import { createRequire } from "node:module"
import ipc from "node-ipc"

const require = createRequire(import.meta.url)
const roo = require("@roo-code/types")
const next = require("roo-code-types-next")

const [socketPath, taskText, answer] = process.argv.slice(2)
const fail = (why, detail) => {
	console.error(JSON.stringify({ error: why, detail }))
	process.exit(1)
}
setTimeout(() => fail("timeout: no taskCompleted"), 30000).unref()

const check = (schema, value, what) => {
	const r = schema.safeParse(value)
	if (!r.success) fail(`${what} does not validate`, { issues: r.error.issues, value })
	return r.data
}

ipc.config.silent = true
ipc.config.maxRetries = 0

const id = "intentgate-test"
let clientId
let taskId
let secondId
let answered = false
const events = []

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
		if (msg.relayClientId !== clientId) fail("relayClientId is not this client", msg)
		if (ev.eventName === roo.RooCodeEventName.TaskCreated) {
			if (!taskId) {
				taskId = ev.payload[0]
			} else {
				secondId = ev.payload[0]
				send({
					type: roo.IpcMessageType.TaskCommand,
					origin: roo.IpcOrigin.Client,
					clientId,
					data: { commandName: roo.TaskCommandName.CancelTask, data: secondId },
				})
			}
		}
		if (ev.eventName === roo.RooCodeEventName.TaskAborted) {
			if (ev.payload[0] !== secondId) fail("taskAborted for another task", ev)
			console.log(JSON.stringify({ clientId, taskId, events, eventNames: Object.values(roo.RooCodeEventName) }))
			ipc.disconnect(id)
			process.exit(0)
		}
		if (ev.eventName === roo.RooCodeEventName.Message) {
			const { message } = ev.payload[0]
			check(roo.clineMessageSchema, message, "ClineMessage")
			if (message.type === "say" && message.say === "error") fail("the server reported an error", message.text)
			if (message.type === "ask" && message.ask === "followup" && !message.partial && !answered) {
				answered = true
				const reply = {
					type: next.IpcMessageType.TaskCommand,
					origin: next.IpcOrigin.Client,
					clientId,
					data: { commandName: next.TaskCommandName.SendMessage, data: { text: answer } },
				}
				if (roo.ipcMessageSchema.safeParse(reply).success) fail("1.63.0 unexpectedly accepts SendMessage")
				send(reply, next.ipcMessageSchema)
			}
		}
		if (ev.eventName === roo.RooCodeEventName.TaskCompleted) {
			const [doneId, usage, tools, extra] = ev.payload
			if (doneId !== taskId) fail("taskCompleted for another task", ev)
			check(roo.tokenUsageSchema, usage, "token usage")
			check(roo.toolUsageSchema, tools, "tool usage")
			if (typeof extra.isSubtask !== "boolean") fail("isSubtask missing")
			if (!answered) fail("taskCompleted before the ask was answered")
			start()
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
					alwaysAllowExecute: false,
					alwaysAllowMcp: true,
					allowedMaxRequests: 7,
				},
				text: taskText,
				newTab: false,
			},
		},
	})
}
