//go:build unix

package proc_test

import (
	"context"
	"fmt"
	"time"

	"github.com/airlock-dev/airlock/backend/proc"
)

// A command with capped output and a stderr tail, stopped at a deadline
// with its whole process group.
func ExampleStart() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, errTail := proc.NewCapped(5), proc.NewTail(10, 80)
	p, err := proc.Start(ctx, proc.Spec{
		Path:      "sh",
		Args:      []string{"-c", "echo hello world; echo oops >&2; exit 3"},
		Env:       []string{"PATH=/usr/bin:/bin"},
		Stdout:    out,
		Stderr:    errTail,
		KillGrace: time.Second,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ex := p.Wait()
	fmt.Printf("%q\n%q\n%v\n", out.String(), errTail.Lines(), ex)
	// Output:
	// "hello\n…[output truncated: 7 more bytes]"
	// ["oops"]
	// exit status 3
}
