package teams

import (
	"fmt"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/backend/core"
)

// decideNext over every combination of what can be open for an agent, in
// both session purposes: it says all_done exactly when nothing is open —
// never while a task assigned to the agent (or handed out by it) is open,
// a message waits, or a notification asks it to read the chat (seed 001's
// pilot failure) — and otherwise it names the most pressing thing.
func TestDecideNextNeverAllDoneWhileOpen(t *testing.T) {
	task := []Task{{ID: "tsk_1", Title: "t"}}
	call := []Notification{{ID: "ntf_1", Type: NotifyChatSession, Action: ActionCheckChat, ConversationID: "conv_1", Instruction: "read it"}}
	info := []Notification{{ID: "ntf_2", Type: NotifyStatusChange, Action: ActionTaskChanged}}
	const parts = 9
	for _, purpose := range []string{core.PurposeTask, core.PurposeChat} {
		for mask := 0; mask < 1<<parts; mask++ {
			on := func(i int) bool { return mask&(1<<i) != 0 }
			st := agentState{purpose: purpose}
			if on(0) {
				st.inProgress = task
			}
			if on(1) {
				st.ready = task
			}
			if on(2) {
				st.waiting = task
			}
			if on(3) {
				st.backlog = task
			}
			if on(4) {
				st.pending = 2
			}
			if on(5) {
				st.unanswered = []string{"conv_1"}
			}
			if on(6) {
				st.delegated = task
			}
			if on(7) {
				st.awaiting = []string{"conv_2"}
			}
			if on(8) && purpose == core.PurposeTask {
				st.notifications = call
			} else if on(8) {
				continue // chat sessions get no notifications
			}
			name := fmt.Sprintf("%s/%09b", purpose, mask)
			a := decideNext(st)
			open := mask != 0
			if (a.Action == NextAllDone) == open {
				t.Errorf("%s: action %s with open=%v", name, a.Action, open)
			}
			if a.Instruction == "" || a.Reason == "" {
				t.Errorf("%s: action %s without instruction or reason", name, a.Action)
			}
			var want string
			switch {
			case purpose == core.PurposeTask && on(8):
				want = NextCheckNotification
			case purpose == core.PurposeTask && on(0):
				want = NextContinueTask
			case purpose == core.PurposeTask && on(1):
				want = NextStartTask
			case purpose == core.PurposeTask && (on(4) || on(5)):
				want = NextCheckChat
			case purpose == core.PurposeChat && (on(4) || on(5)):
				want = NextRespond
			case purpose == core.PurposeChat && (on(0) || on(1) || on(2) || on(3)):
				want = NextSwitchToTask
			case purpose == core.PurposeTask && on(2):
				want = NextWaitBlocked
			case purpose == core.PurposeTask && on(3):
				want = NextPlanBacklog
			case purpose == core.PurposeTask && on(6):
				want = NextMonitor
			case purpose == core.PurposeTask && on(7):
				want = NextWaitReply
			case purpose == core.PurposeChat && on(7):
				want = NextWaitReply
			case purpose == core.PurposeChat && on(6):
				want = NextMonitor
			default:
				want = NextAllDone
			}
			if a.Action != want {
				t.Errorf("%s: action %s, want %s", name, a.Action, want)
			}
		}
	}
	// A notification that only informs does not displace the work.
	a := decideNext(agentState{purpose: core.PurposeTask, notifications: info})
	if a.Action != NextAllDone || len(a.Notifications) != 1 {
		t.Errorf("an informative notification alone: %s with %d notifications", a.Action, len(a.Notifications))
	}
	a = decideNext(agentState{purpose: core.PurposeTask, notifications: append(append([]Notification{}, info...), Notification{ID: "i", Type: NotifyInterrupt, ConversationID: "c", Instruction: "now"}, call[0])})
	if a.Action != NextCheckNotification || a.Instruction[:3] != "now" {
		t.Errorf("an interrupt among others is not first: %+v", a)
	}
}

// A task session told to check the chat says whether messages wait or a
// conversation only ends with someone else's message, read already (found
// by a new-user test: it said messages wait while none did).
func TestCheckChatSaysWhatWaits(t *testing.T) {
	a := decideNext(agentState{purpose: core.PurposeTask, pending: 2})
	if a.Action != NextCheckChat || a.Reason != "2 message(s) wait for you in chat" {
		t.Errorf("with 2 pending: %s, %q", a.Action, a.Reason)
	}
	a = decideNext(agentState{purpose: core.PurposeTask, unanswered: []string{"conv_1"}})
	if a.Action != NextCheckChat || a.ConversationID != "conv_1" || strings.Contains(a.Reason, "wait for you") ||
		!strings.Contains(a.Instruction, "which you have read") {
		t.Errorf("nothing pending, one conversation unanswered: %s, %q, %q", a.Action, a.Reason, a.Instruction)
	}
}

func TestFindCycle(t *testing.T) {
	cases := []struct {
		graph map[string][]string
		cycle bool
	}{
		{map[string][]string{}, false},
		{map[string][]string{"a": {"b"}, "b": {"c"}}, false},
		{map[string][]string{"a": {"b", "c"}, "b": {"c"}, "c": nil}, false}, // a diamond is no cycle
		{map[string][]string{"a": {"a"}}, true},
		{map[string][]string{"a": {"b"}, "b": {"a"}}, true},
		{map[string][]string{"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, true},
	}
	for i, c := range cases {
		got := findCycle(c.graph)
		if (got != nil) != c.cycle {
			t.Errorf("case %d: cycle %v, want %v", i, got, c.cycle)
		}
		if got != nil && got[0] != got[len(got)-1] {
			t.Errorf("case %d: the reported path %v does not close", i, got)
		}
	}
}
