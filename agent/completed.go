package agent

// emitCompleted reports taskCompleted with the usage so far. The reference
// emits it right after `say completion_result`, before `ask
// completion_result`: a person's feedback at that ask may continue the task,
// which then completes (and reports) again.
func (t *Task) emitCompleted() {
	u := t.usage
	roo, _ := t.tools.Split()
	t.emit(Event{Name: EventCompleted, State: t.State(), TokenUsage: &u, ToolUsage: roo})
}
