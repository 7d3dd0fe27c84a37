package fleetview

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// run is Run with stdout, stderr and the paths asked of list.
func run(t *testing.T, list List, getenv func(string) string, args ...string) (code int, stdout, stderr string, asked []string) {
	t.Helper()
	var out, errb strings.Builder
	if getenv == nil {
		getenv = func(k string) string { return map[string]string{"HOME": "/home/op"}[k] }
	}
	env := Env{Getenv: getenv, Stdout: &out, Stderr: &errb, Now: func() time.Time { return now }}
	code = Run(context.Background(), args, env, func(string) (List, error) {
		return func(ctx context.Context, path string) ([]byte, error) {
			asked = append(asked, path)
			return list(ctx, path)
		}, nil
	})
	return code, out.String(), errb.String(), asked
}

func TestRunFlags(t *testing.T) {
	body := fleet(t)
	list := func(context.Context, string) ([]byte, error) { return body, nil }
	code, out, _, asked := run(t, list, nil, "--problems", "--pool", "node-pool in (nas,edge)")
	if code != ExitOK || strings.Count(out, "\n") != 5 || strings.Contains(out, "worker-1") {
		t.Errorf("--problems: exit %d\n%s; want the header and four nodes with problems", code, out)
	}
	if len(asked) != 1 || asked[0] != "/api/v1/nodes?labelSelector=node-pool+in+%28nas%2Cedge%29&limit=500" {
		t.Errorf("--pool asked %v; want the selector as the API server's labelSelector, a page of 500", asked)
	}
	code, out, _, _ = run(t, list, nil, "-o", "json")
	if code != ExitOK || !strings.HasPrefix(out, "{\n  \"nodes\": [") || strings.Count(out, `"node":`) != 6 {
		t.Errorf("-o json: exit %d\n%s", code, out)
	}
	for _, bad := range [][]string{{"-o", "yaml"}, {"--nope"}, {"extra"}} {
		if code, _, stderr, _ := run(t, list, nil, bad...); code != ExitUsage || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q; want a usage error saying why", bad, code, stderr)
		}
	}
	failing := func(context.Context, string) ([]byte, error) {
		return nil, fmt.Errorf("GET /api/v1/nodes: %d Forbidden: nodes is forbidden", 403)
	}
	if code, _, stderr, _ := run(t, failing, nil); code != ExitFailed || !strings.Contains(stderr, "403 Forbidden") {
		t.Errorf("a refused list: exit %d, %q; want exit 1 with the API server's words", code, stderr)
	}
}

func TestKubeconfigFile(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, f := range []string{a, b} {
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	for _, c := range []struct {
		flag string
		env  map[string]string
		want string
		err  string
	}{
		{flag: "/x", env: map[string]string{"KUBECONFIG": a}, want: "/x"},
		{env: map[string]string{"KUBECONFIG": a + ":" + filepath.Join(dir, "missing"), "HOME": "/h"}, want: a},
		{env: map[string]string{"HOME": "/h"}, want: "/h/.kube/config"},
		{env: map[string]string{"KUBECONFIG": a + ":" + b}, err: "names 2 files"},
		{env: map[string]string{"KUBECONFIG": filepath.Join(dir, "missing")}, err: "no such file"},
		{env: map[string]string{}, err: "pass --kubeconfig"},
	} {
		got, err := KubeconfigFile(c.flag, env(c.env))
		if got != c.want || (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("flag %q env %v: %q, %v; want %q, %q", c.flag, c.env, got, err, c.want, c.err)
		}
	}
}
