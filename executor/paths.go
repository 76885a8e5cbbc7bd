package executor

import (
	"os"
	"path/filepath"
	"strings"
)

// ConfinePaths resolves each path (symlinks included) and accepts it only if
// it is a regular file inside one of roots, so a model that may upload files
// cannot hand a page /etc/shadow or ~/.ssh/id_ed25519. It returns the
// resolved paths. Roots that do not exist confine to nothing.
func ConfinePaths(roots, paths []string) ([]string, error) {
	var real []string
	for _, r := range roots {
		if abs, err := filepath.Abs(r); err == nil {
			if rr, err := filepath.EvalSymlinks(abs); err == nil {
				real = append(real, rr)
			}
		}
	}
	where := strings.Join(roots, ", ")
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, Errorf(CodeBadArgs, "bad path %q: %v", p, err)
		}
		resolved, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return nil, Errorf(CodeBadArgs, "file %q does not exist on the server", p).
				WithHint("pass paths of files in the upload directory: " + where)
		}
		if !within(real, resolved) {
			return nil, Errorf(CodeBadArgs, "file %q is outside the upload directories", p).
				WithHint("put the file in " + where + " (the operator may add directories with --upload-dir)")
		}
		st, err := os.Stat(resolved)
		if err != nil || !st.Mode().IsRegular() {
			return nil, Errorf(CodeBadArgs, "%q is not a regular file", p)
		}
		out = append(out, resolved)
	}
	return out, nil
}

func within(roots []string, p string) bool {
	for _, r := range roots {
		if rel, err := filepath.Rel(r, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && rel != "." {
			return true
		}
	}
	return false
}
