package main

import (
	"unsafe"

	"golang.org/x/sys/windows"
)

// killChildrenWithUs puts this process in a new job object that kills
// every process in it when its last handle closes. The handle is this
// process's alone and never closed, so it closes when this process ends,
// however it ends (Ctrl+C, TerminateProcess, a killed console): the
// intentgate-full child started afterwards, and what it starts in turn,
// inherit the job and end with it, instead of running on unseen with the
// workspace's locks and the agent's streams. Processes that ask to break
// away (CREATE_BREAKAWAY_FROM_JOB) may. Best effort: where the job cannot
// be made or joined (an older Windows inside a job that forbids nesting),
// the child runs as before.
func killChildrenWithUs() {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{
			LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE | windows.JOB_OBJECT_LIMIT_BREAKAWAY_OK,
		},
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return
	}
	if err := windows.AssignProcessToJobObject(job, windows.CurrentProcess()); err != nil {
		windows.CloseHandle(job)
	}
}
