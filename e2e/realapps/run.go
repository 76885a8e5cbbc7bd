package realapps

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Result is one application's run through one browser server.
type Result struct {
	App   string
	Tasks int
	Done  int
	Stats Stats
	// Failed holds an error per task that failed to run or whose outcome
	// was not found.
	Failed []error
}

// Run drives the agent through app's tasks (only the short set when short),
// in order, checking each one's outcome after it ran. A failed task is
// recorded and the run goes on: later tasks may still succeed.
func Run(ctx context.Context, app *App, b Browser, short bool) Result {
	tasks := app.Tasks
	if short {
		tasks = nil
		for _, t := range app.Tasks {
			if t.Short {
				tasks = append(tasks, t)
			}
		}
	}
	a := &Agent{B: b, Tries: 8}
	res := Result{App: app.Name, Tasks: len(tasks)}
	for _, task := range tasks {
		err := task.Run(ctx, a, app)
		if err == nil {
			checked := time.Now()
			err = check(ctx, task, app)
			a.waited += time.Since(checked)
		}
		if err != nil {
			res.Failed = append(res.Failed, fmt.Errorf("%s: %s: %w", app.Name, task.Name, err))
			continue
		}
		res.Done++
	}
	res.Stats = b.Stats()
	res.Stats.Waited = a.waited
	return res
}

// check checks a task's outcome, looking again for up to checkWait while
// it is not found: the agent's last act (a form's submit) returns when the
// browser sent it, and the application may still be writing.
func check(ctx context.Context, task Task, app *App) error {
	deadline := time.Now().Add(checkWait)
	for {
		err := task.Check(ctx, app)
		if err == nil || !errors.Is(err, errOutcome) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// checkWait bounds how long check looks for an outcome.
const checkWait = 10 * time.Second
