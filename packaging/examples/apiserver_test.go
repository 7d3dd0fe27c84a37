package examples

import (
	"encoding/json"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/apiserver"
)

// plans are the SUC Plans this project ships.
var plans = []string{"suc-switch-plan.yaml", "suc-install-plan.yaml"}

// The Plans as the cluster takes them: a real kube-apiserver with SUC's
// Plan CRD (testdata/SOURCE) creates each one with strict field validation
// (an unknown or misspelt field is refused, not silently pruned), and
// reads back the spec that was sent, so SUC gets what the file says. A
// typo and a wrong type are refused, so the pass means something.
func TestPlansAgainstARealAPIServer(t *testing.T) {
	api := apiserver.Start(t)
	installPlanCRD(t, api)
	create(t, api, "/api/v1/namespaces", map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "system-upgrade"}}, http.StatusCreated)

	for _, file := range plans {
		doc := readYAML(t, file)
		name := doc["metadata"].(map[string]any)["name"].(string)
		create(t, api, "/apis/upgrade.cattle.io/v1/namespaces/system-upgrade/plans?fieldValidation=Strict", doc, http.StatusCreated)
		code, body := api.Do(http.MethodGet, "/apis/upgrade.cattle.io/v1/namespaces/system-upgrade/plans/"+name, "", nil)
		if code != http.StatusOK {
			t.Fatalf("%s: reading plan %s back: %d %s", file, name, code, body)
		}
		var got map[string]any
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		if want := roundTrip(t, doc["spec"]); !reflect.DeepEqual(got["spec"], want) {
			t.Errorf("%s: the API server stored another spec than the file's:\n got %v\nwant %v", file, got["spec"], want)
		}
	}

	typo := readYAML(t, "suc-install-plan.yaml")
	typo["metadata"].(map[string]any)["name"] = "typo"
	typo["spec"].(map[string]any)["concurency"] = 2
	if body := create(t, api, "/apis/upgrade.cattle.io/v1/namespaces/system-upgrade/plans?fieldValidation=Strict", typo, http.StatusBadRequest); !strings.Contains(body, `unknown field \"spec.concurency\"`) {
		t.Errorf("a misspelt field was refused for another reason: %s", body)
	}
	wrong := readYAML(t, "suc-install-plan.yaml")
	wrong["metadata"].(map[string]any)["name"] = "wrong-type"
	wrong["spec"].(map[string]any)["concurrency"] = "two"
	if body := create(t, api, "/apis/upgrade.cattle.io/v1/namespaces/system-upgrade/plans?fieldValidation=Strict", wrong, http.StatusUnprocessableEntity); !strings.Contains(body, "spec.concurrency") {
		t.Errorf("a wrong type was refused for another reason: %s", body)
	}
}

// installPlanCRD creates SUC's Plan CRD and waits until the API server
// serves Plans.
func installPlanCRD(t *testing.T, api *apiserver.Server) {
	t.Helper()
	crd := readYAML(t, "testdata/upgrade.cattle.io_plans.yaml")
	create(t, api, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd, http.StatusCreated)
	deadline := time.Now().Add(time.Minute)
	for {
		code, body := api.Do(http.MethodGet, "/apis/upgrade.cattle.io/v1/namespaces/system-upgrade/plans", "", nil)
		if code == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Plan CRD is not served a minute after its creation: %d %s", code, body)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// create POSTs obj as JSON and fails the test unless the status is want;
// it returns the body.
func create(t *testing.T, api *apiserver.Server, path string, obj any, want int) string {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	code, body := api.Do(http.MethodPost, path, "application/json", b)
	if code != want {
		t.Fatalf("POST %s: %d, want %d: %s", path, code, want, body)
	}
	return string(body)
}

func readYAML(t *testing.T, file string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return doc
}

// roundTrip is v as JSON decodes it (numbers as float64), to compare with
// what the API server returns.
func roundTrip(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
