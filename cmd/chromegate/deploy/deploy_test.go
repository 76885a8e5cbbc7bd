package deploy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/chromegate/chromegate/executor/cdp"
	"github.com/chromegate/chromegate/policy"
)

// The objects the manifests hold, as far as the checks read them (kubecheck
// has already decoded each strictly into the API's own types).
type object struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec json.RawMessage   `json:"spec"`
	Data map[string]string `json:"data"`

	AutomountServiceAccountToken *bool `json:"automountServiceAccountToken"`
}

type deployment struct {
	Replicas int `json:"replicas"`
	Selector struct {
		MatchLabels map[string]string `json:"matchLabels"`
	} `json:"selector"`
	Template struct {
		Metadata struct {
			Labels map[string]string `json:"labels"`
		} `json:"metadata"`
		Spec podSpec `json:"spec"`
	} `json:"template"`
}

type podSpec struct {
	AutomountServiceAccountToken *bool           `json:"automountServiceAccountToken"`
	SecurityContext              securityContext `json:"securityContext"`
	Containers                   []container     `json:"containers"`
	InitContainers               []container     `json:"initContainers"`
	Volumes                      []struct {
		Name     string `json:"name"`
		EmptyDir *struct {
			Medium string `json:"medium"`
		} `json:"emptyDir"`
		ConfigMap *struct {
			Name string `json:"name"`
		} `json:"configMap"`
	} `json:"volumes"`
}

type securityContext struct {
	RunAsNonRoot             *bool `json:"runAsNonRoot"`
	RunAsUser                *int  `json:"runAsUser"`
	ReadOnlyRootFilesystem   *bool `json:"readOnlyRootFilesystem"`
	AllowPrivilegeEscalation *bool `json:"allowPrivilegeEscalation"`
	Privileged               *bool `json:"privileged"`
	Capabilities             *struct {
		Add  []string `json:"add"`
		Drop []string `json:"drop"`
	} `json:"capabilities"`
	SeccompProfile *struct {
		Type string `json:"type"`
	} `json:"seccompProfile"`
}

type container struct {
	Name  string   `json:"name"`
	Image string   `json:"image"`
	Args  []string `json:"args"`
	Env   []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"env"`
	Ports []struct {
		Name          string `json:"name"`
		ContainerPort int    `json:"containerPort"`
	} `json:"ports"`
	ReadinessProbe  *probe          `json:"readinessProbe"`
	LivenessProbe   *probe          `json:"livenessProbe"`
	SecurityContext securityContext `json:"securityContext"`
	Resources       struct {
		Requests map[string]string `json:"requests"`
		Limits   map[string]string `json:"limits"`
	} `json:"resources"`
	VolumeMounts []struct {
		Name      string `json:"name"`
		MountPath string `json:"mountPath"`
	} `json:"volumeMounts"`
}

type probe struct {
	HTTPGet *struct {
		Path string          `json:"path"`
		Port json.RawMessage `json:"port"`
	} `json:"httpGet"`
}

// port resolves a probe's or a Service's port, a number or a container
// port's name.
func (c container) port(t *testing.T, raw json.RawMessage) int {
	t.Helper()
	var n int
	if json.Unmarshal(raw, &n) == nil {
		return n
	}
	var name string
	if err := json.Unmarshal(raw, &name); err != nil {
		t.Fatalf("port %s: %v", raw, err)
	}
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	t.Fatalf("container %s has no port named %q", c.Name, name)
	return 0
}

// flag returns the value of --name=value among args ("" and false when
// absent); a flag given alone is "true".
func flagValues(args []string, name string) []string {
	var vs []string
	for _, a := range args {
		if a == "--"+name {
			vs = append(vs, "true")
		} else if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			vs = append(vs, v)
		}
	}
	return vs
}

func flagValue(t *testing.T, args []string, name string) string {
	t.Helper()
	vs := flagValues(args, name)
	if len(vs) != 1 {
		t.Fatalf("args %q: want --%s once, got %d", args, name, len(vs))
	}
	return vs[0]
}

func portOf(t *testing.T, addr string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("address %q: %v", addr, err)
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatalf("address %q: %v", addr, err)
	}
	return n
}

func decode[T any](t *testing.T, raw json.RawMessage) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

var (
	renderOnce sync.Once
	rendered   []object
	renderErr  string
)

// render runs kubecheck on k8s/: kustomize's build, then each object
// decoded strictly into k8s.io/api's types; it returns the objects.
// kubecheck is a module of its own (no k8s.io in the main module); its
// build is cached after the first run.
func render(t *testing.T) []object {
	t.Helper()
	renderOnce.Do(func() {
		goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
		k8s, _ := filepath.Abs("k8s")
		tmp, err := os.MkdirTemp("", "kubecheck-")
		if err != nil {
			renderErr = err.Error()
			return
		}
		defer os.RemoveAll(tmp)
		bin := filepath.Join(tmp, "kubecheck")
		build := exec.Command(goBin, "build", "-o", bin, ".")
		build.Dir = "kubecheck"
		build.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=", "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			renderErr = "build kubecheck: " + err.Error() + "\n" + string(out)
			return
		}
		var stderr bytes.Buffer
		cmd := exec.Command(bin, k8s)
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			renderErr = "kubecheck k8s: " + err.Error() + "\n" + stderr.String()
			return
		}
		if err := json.Unmarshal(out, &rendered); err != nil {
			renderErr = "kubecheck's output: " + err.Error()
		}
	})
	if renderErr != "" {
		t.Fatal(renderErr)
	}
	return rendered
}

func find(t *testing.T, objs []object, kind, name string) object {
	t.Helper()
	for _, o := range objs {
		if o.Kind == kind && o.Metadata.Name == name {
			return o
		}
	}
	t.Fatalf("no %s %s in the manifests", kind, name)
	return object{}
}

// findPrefix finds a generated object (kustomize suffixes a hash).
func findPrefix(t *testing.T, objs []object, kind, prefix string) object {
	t.Helper()
	for _, o := range objs {
		if o.Kind == kind && strings.HasPrefix(o.Metadata.Name, prefix+"-") {
			return o
		}
	}
	t.Fatalf("no %s %s-… in the manifests", kind, prefix)
	return object{}
}

func isTrue(b *bool) bool  { return b != nil && *b }
func isFalse(b *bool) bool { return b != nil && !*b }

// TestManifestsParse: kustomize builds k8s/ and every object is valid
// against the Kubernetes API's types, strictly; the kinds are the ones the
// issue asks for.
func TestManifestsParse(t *testing.T) {
	objs := render(t)
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.Kind]++
	}
	for _, k := range []string{"Deployment", "Service", "PodDisruptionBudget", "NetworkPolicy", "HorizontalPodAutoscaler", "Secret", "ConfigMap"} {
		if kinds[k] == 0 {
			t.Errorf("no %s in the manifests (have %v)", k, kinds)
		}
	}
}

// TestPodsAreLockedDown: every container of every Deployment runs as
// non-root, read-only root, no escalation, all capabilities dropped,
// RuntimeDefault seccomp, no service account token, with resources.
func TestPodsAreLockedDown(t *testing.T) {
	for _, o := range render(t) {
		if o.Kind != "Deployment" {
			continue
		}
		d := decode[deployment](t, o.Spec)
		ps := d.Template.Spec
		if !isFalse(ps.AutomountServiceAccountToken) {
			t.Errorf("%s: automountServiceAccountToken is not false", o.Metadata.Name)
		}
		if ps.SecurityContext.SeccompProfile == nil || ps.SecurityContext.SeccompProfile.Type != "RuntimeDefault" {
			t.Errorf("%s: the pod's seccompProfile is not RuntimeDefault", o.Metadata.Name)
		}
		for k, v := range d.Selector.MatchLabels {
			if d.Template.Metadata.Labels[k] != v {
				t.Errorf("%s: the selector's %s=%s is not on the pod template", o.Metadata.Name, k, v)
			}
		}
		for _, c := range append(slices.Clone(ps.Containers), ps.InitContainers...) {
			sc, who := c.SecurityContext, o.Metadata.Name+"/"+c.Name
			if !isTrue(sc.RunAsNonRoot) && !isTrue(ps.SecurityContext.RunAsNonRoot) {
				t.Errorf("%s: runAsNonRoot is not set", who)
			}
			if u := sc.RunAsUser; u != nil && *u == 0 {
				t.Errorf("%s: runs as uid 0", who)
			}
			if u := ps.SecurityContext.RunAsUser; u != nil && *u == 0 {
				t.Errorf("%s: the pod runs as uid 0", who)
			}
			if !isTrue(sc.ReadOnlyRootFilesystem) {
				t.Errorf("%s: readOnlyRootFilesystem is not true", who)
			}
			if !isFalse(sc.AllowPrivilegeEscalation) {
				t.Errorf("%s: allowPrivilegeEscalation is not false", who)
			}
			if isTrue(sc.Privileged) {
				t.Errorf("%s: privileged", who)
			}
			if sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []string{"ALL"}) || len(sc.Capabilities.Add) > 0 {
				t.Errorf("%s: capabilities are not drop [ALL], add none", who)
			}
			if c.Resources.Requests["memory"] == "" || c.Resources.Limits["memory"] == "" || c.Resources.Requests["cpu"] == "" {
				t.Errorf("%s: resources lack a cpu request or a memory request and limit", who)
			}
			if c.ReadinessProbe == nil || c.LivenessProbe == nil {
				t.Errorf("%s: no readiness or liveness probe", who)
			}
		}
	}
}

// TestReplicas: the chromegate Deployment serves what its probes,
// Services, HAProxy and the image expect: serve's flags name the ports the
// probes and Services use; /readyz and /healthz (the paths serve's
// --metrics-addr answers) on the metrics port; scratch only in emptyDirs
// (/dev/shm in memory); the OPA configuration mounted where --opa-config
// reads it; the image's user and data dir.
func TestReplicas(t *testing.T) {
	objs := render(t)
	o := find(t, objs, "Deployment", "chromegate")
	d := decode[deployment](t, o.Spec)
	if d.Replicas != 3 {
		t.Errorf("replicas = %d, want 3", d.Replicas)
	}
	if len(d.Template.Spec.Containers) != 1 {
		t.Fatalf("want one container, got %d", len(d.Template.Spec.Containers))
	}
	c := d.Template.Spec.Containers[0]
	if c.Args[0] != "serve" {
		t.Fatalf("args %q do not run serve", c.Args)
	}
	checkFlagsExist(t, c.Args[1:])

	httpPort := portOf(t, flagValue(t, c.Args, "http"))
	metricsPort := portOf(t, flagValue(t, c.Args, "metrics-addr"))
	if flagValue(t, c.Args, "allow-remote") != "true" {
		t.Error("--allow-remote is needed for a non-loopback --http and --metrics-addr")
	}
	if got := c.port(t, json.RawMessage(`"http"`)); got != httpPort {
		t.Errorf("container port http = %d, --http listens on %d", got, httpPort)
	}
	for _, p := range []struct {
		name  string
		probe *probe
		path  string
	}{{"readiness", c.ReadinessProbe, "/readyz"}, {"liveness", c.LivenessProbe, "/healthz"}} {
		if p.probe == nil || p.probe.HTTPGet == nil {
			t.Errorf("no %s httpGet probe", p.name)
			continue
		}
		if p.probe.HTTPGet.Path != p.path {
			t.Errorf("%s probe asks %s, want %s", p.name, p.probe.HTTPGet.Path, p.path)
		}
		if got := c.port(t, p.probe.HTTPGet.Port); got != metricsPort {
			t.Errorf("%s probe on port %d, --metrics-addr listens on %d", p.name, got, metricsPort)
		}
	}

	// The headless Service HAProxy resolves, and the Host header the
	// agents send: HAProxy's Service port is --http's, which --http-host
	// names without a port assume.
	svc := decode[struct {
		ClusterIP string            `json:"clusterIP"`
		Selector  map[string]string `json:"selector"`
		Ports     []struct {
			Name       string          `json:"name"`
			Port       int             `json:"port"`
			TargetPort json.RawMessage `json:"targetPort"`
		} `json:"ports"`
	}](t, find(t, objs, "Service", "chromegate-replicas").Spec)
	if svc.ClusterIP != "None" {
		t.Errorf("chromegate-replicas is not headless (HAProxy resolves its pods)")
	}
	for k, v := range svc.Selector {
		if d.Template.Metadata.Labels[k] != v {
			t.Errorf("chromegate-replicas selects %s=%s, not on the pods", k, v)
		}
	}
	for _, p := range svc.Ports {
		if p.Name == "http" && c.port(t, p.TargetPort) != httpPort {
			t.Errorf("chromegate-replicas' http port does not reach --http")
		}
	}
	lb := decode[struct {
		Ports []struct {
			Port int `json:"port"`
		} `json:"ports"`
	}](t, find(t, objs, "Service", "chromegate").Spec)
	if len(lb.Ports) != 1 || lb.Ports[0].Port != httpPort {
		t.Errorf("Service chromegate's port is not --http's %d (the Host header would not match --http-host)", httpPort)
	}

	// Writable paths: only emptyDirs, /dev/shm in memory.
	vols := map[string]string{}
	for _, v := range d.Template.Spec.Volumes {
		switch {
		case v.EmptyDir != nil:
			vols[v.Name] = "emptyDir:" + v.EmptyDir.Medium
		case v.ConfigMap != nil:
			vols[v.Name] = "configMap:" + v.ConfigMap.Name
		}
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = vols[m.Name]
	}
	img := readContainerfile(t)
	for path, want := range map[string]string{
		"/tmp":                         "emptyDir:",
		"/dev/shm":                     "emptyDir:Memory",
		img.env["CHROMEGATE_DATA_DIR"]: "emptyDir:",
	} {
		if mounts[path] != want {
			t.Errorf("%s is mounted from %q, want %s", path, mounts[path], want)
		}
	}
	if u := d.Template.Spec.SecurityContext.RunAsUser; u == nil || strconv.Itoa(*u) != img.uid {
		t.Errorf("runAsUser is not the image's user %s", img.uid)
	}
	for _, p := range []int{httpPort, metricsPort} {
		if !slices.Contains(img.expose, p) {
			t.Errorf("the image does not EXPOSE %d", p)
		}
	}

	// --opa-config names a file of the mounted ConfigMap.
	cfg := flagValue(t, c.Args, "opa-config")
	cm := vols[volumeAt(t, c, filepath.Dir(cfg))]
	gen := findPrefix(t, objs, "ConfigMap", "chromegate-opa")
	if cm != "configMap:"+gen.Metadata.Name || gen.Data[filepath.Base(cfg)] == "" {
		t.Errorf("--opa-config %s is not a key of the mounted ConfigMap (mounted %q)", cfg, cm)
	}
	// … which OPA's plugin manager takes, as serve would (nothing is
	// started or fetched: that is New's).
	if _, err := policy.NewOPA(policy.OPAConfig{Config: []byte(gen.Data[filepath.Base(cfg)]), Replica: "chromegate-0"}); err != nil {
		t.Errorf("the OPA configuration in the ConfigMap: %v", err)
	}
}

func volumeAt(t *testing.T, c container, path string) string {
	t.Helper()
	for _, m := range c.VolumeMounts {
		if m.MountPath == path {
			return m.Name
		}
	}
	t.Fatalf("nothing is mounted at %s", path)
	return ""
}

// checkFlagsExist: every --flag the manifests pass to serve is one serve
// registers (in cmd/chromegate's source), so a renamed flag fails here,
// not in a cluster.
func checkFlagsExist(t *testing.T, args []string) {
	t.Helper()
	for _, a := range args {
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !strings.HasPrefix(a, "--") || !serveHasFlag(t, name) {
			t.Errorf("serve has no flag %q", a)
		}
	}
}

// serveHasFlag reports whether cmd/chromegate registers the flag name
// (fs.StringVar(&x, "name", …), fs.Var(&x, "name", …), fs.Bool("name", …)).
func serveHasFlag(t *testing.T, name string) bool {
	t.Helper()
	var src strings.Builder
	files, _ := filepath.Glob(filepath.Join("..", "*.go"))
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src.Write(b)
	}
	re := regexp.MustCompile(`fs\.\w+\((&?[\w.]+, )?"` + regexp.QuoteMeta(name) + `"`)
	return re.MatchString(src.String())
}

// TestAutoscalingAndDisruption: the HPA scales the Deployment from its
// replicas up to no more than HAProxy has slots for, on the adapter's
// metric, with CPU as the fallback; the PDB keeps all but one.
func TestAutoscalingAndDisruption(t *testing.T) {
	objs := render(t)
	d := decode[deployment](t, find(t, objs, "Deployment", "chromegate").Spec)
	hpa := decode[struct {
		ScaleTargetRef struct{ Kind, Name string } `json:"scaleTargetRef"`
		MinReplicas    int                         `json:"minReplicas"`
		MaxReplicas    int                         `json:"maxReplicas"`
		Metrics        []struct {
			Type string `json:"type"`
			Pods *struct {
				Metric struct{ Name string } `json:"metric"`
			} `json:"pods"`
			Resource *struct{ Name string } `json:"resource"`
		} `json:"metrics"`
	}](t, find(t, objs, "HorizontalPodAutoscaler", "chromegate").Spec)
	if hpa.ScaleTargetRef.Kind != "Deployment" || hpa.ScaleTargetRef.Name != "chromegate" {
		t.Errorf("the HPA scales %v", hpa.ScaleTargetRef)
	}
	if hpa.MinReplicas != d.Replicas {
		t.Errorf("minReplicas %d != the Deployment's %d", hpa.MinReplicas, d.Replicas)
	}
	if slots := haproxySlots(t, findPrefix(t, objs, "ConfigMap", "haproxy").Data["haproxy.cfg"]); hpa.MaxReplicas > slots {
		t.Errorf("maxReplicas %d > HAProxy's %d server slots", hpa.MaxReplicas, slots)
	}
	var custom, cpu bool
	adapter, err := os.ReadFile(filepath.Join("k8s", "prometheus-adapter.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range hpa.Metrics {
		if m.Pods != nil {
			custom = true
			if !strings.Contains(string(adapter), "as: "+m.Pods.Metric.Name+"\n") {
				t.Errorf("no adapter rule serves %s", m.Pods.Metric.Name)
			}
		}
		cpu = cpu || (m.Resource != nil && m.Resource.Name == "cpu")
	}
	if !custom || !cpu {
		t.Errorf("want a Pods metric from the adapter and cpu as fallback (custom %v, cpu %v)", custom, cpu)
	}
	if !strings.Contains(string(adapter), "seriesQuery: 'chromegate_tool_calls_total{") {
		t.Error("the adapter rule does not read chromegate_tool_calls_total")
	}
	// … which chromegate exports.
	metricsSrc, _ := filepath.Glob(filepath.Join("..", "internal", "metrics", "*.go"))
	exported := false
	for _, f := range metricsSrc {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		exported = exported || (!strings.HasSuffix(f, "_test.go") && bytes.Contains(b, []byte(`"chromegate_tool_calls_total"`)))
	}
	if !exported {
		t.Error("chromegate no longer exports chromegate_tool_calls_total, which the HPA's adapter rule reads")
	}
	pdb := decode[struct {
		MaxUnavailable int `json:"maxUnavailable"`
		Selector       struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"selector"`
	}](t, find(t, objs, "PodDisruptionBudget", "chromegate").Spec)
	if pdb.MaxUnavailable != 1 || !mapsEqual(pdb.Selector.MatchLabels, d.Selector.MatchLabels) {
		t.Errorf("the PDB does not keep all but one replica: %+v", pdb)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

type netpol struct {
	PodSelector struct {
		MatchLabels map[string]string `json:"matchLabels"`
	} `json:"podSelector"`
	PolicyTypes []string `json:"policyTypes"`
	Ingress     []rule   `json:"ingress"`
	Egress      []rule   `json:"egress"`
}

type rule struct {
	Peers []struct {
		PodSelector       *json.RawMessage `json:"podSelector"`
		NamespaceSelector *json.RawMessage `json:"namespaceSelector"`
		IPBlock           *struct {
			CIDR   string   `json:"cidr"`
			Except []string `json:"except"`
		} `json:"ipBlock"`
	}
	Ports []struct {
		Port json.RawMessage `json:"port"`
	} `json:"ports"`
}

func (r *rule) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	for _, k := range []string{"to", "from"} {
		if v, ok := raw[k]; ok {
			if err := json.Unmarshal(v, &r.Peers); err != nil {
				return err
			}
		}
	}
	if v, ok := raw["ports"]; ok {
		return json.Unmarshal(v, &r.Ports)
	}
	return nil
}

// TestNetworkPolicy: everything is denied by default; the replicas' every
// egress rule names its peers and ports (no rule opens everything), and
// an address block never includes loopback, private, link-local (the
// metadata endpoint) or carrier-grade NAT space; the metrics port is open
// only to Prometheus and the MCP port only to HAProxy.
func TestNetworkPolicy(t *testing.T) {
	objs := render(t)
	denyAll := false
	replica := decode[deployment](t, find(t, objs, "Deployment", "chromegate").Spec).Template.Metadata.Labels
	var egress, ingress []rule
	for _, o := range objs {
		if o.Kind != "NetworkPolicy" {
			continue
		}
		np := decode[netpol](t, o.Spec)
		if len(np.PodSelector.MatchLabels) == 0 && slices.Contains(np.PolicyTypes, "Ingress") &&
			slices.Contains(np.PolicyTypes, "Egress") && len(np.Ingress) == 0 && len(np.Egress) == 0 {
			denyAll = true
			continue
		}
		selects := true
		for k, v := range np.PodSelector.MatchLabels {
			selects = selects && replica[k] == v
		}
		if selects {
			egress = append(egress, np.Egress...)
			ingress = append(ingress, np.Ingress...)
		}
	}
	if !denyAll {
		t.Fatal("no NetworkPolicy denies every pod's ingress and egress by default")
	}
	if len(egress) == 0 || len(ingress) == 0 {
		t.Fatal("no NetworkPolicy selects the replicas")
	}
	for i, r := range egress {
		if len(r.Peers) == 0 || len(r.Ports) == 0 {
			t.Errorf("egress rule %d of the replicas opens every destination or every port", i)
		}
		for _, p := range r.Peers {
			if p.IPBlock == nil {
				continue
			}
			_, block, err := net.ParseCIDR(p.IPBlock.CIDR)
			if err != nil {
				t.Fatal(err)
			}
			for _, forbidden := range []string{"127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0"} {
				ip := net.ParseIP(forbidden)
				if block.Contains(ip) && !excepted(t, ip, p.IPBlock.Except) {
					t.Errorf("egress to %s is allowed by %s", forbidden, p.IPBlock.CIDR)
				}
			}
		}
	}
	d := decode[deployment](t, find(t, objs, "Deployment", "chromegate").Spec)
	c := d.Template.Spec.Containers[0]
	httpPort := portOf(t, flagValue(t, c.Args, "http"))
	for i, r := range ingress {
		if len(r.Peers) == 0 || len(r.Ports) == 0 {
			t.Errorf("ingress rule %d of the replicas is open to every source or port", i)
		}
		for _, p := range r.Ports {
			if c.port(t, p.Port) == httpPort && (len(r.Peers) != 1 || r.Peers[0].NamespaceSelector != nil) {
				t.Errorf("ingress rule %d opens --http's port to more than HAProxy", i)
			}
		}
	}
}

func excepted(t *testing.T, ip net.IP, except []string) bool {
	for _, e := range except {
		_, n, err := net.ParseCIDR(e)
		if err != nil {
			t.Fatal(err)
		}
		if n.Contains(ip) {
			return true
		}
	}
	return false
}

// routing is a HAProxy config's backend lines that decide where a request
// goes (not how servers are found).
func routing(cfg string) []string {
	var lines []string
	in := false
	for _, l := range strings.Split(cfg, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "backend ") {
			in = true
			continue
		}
		if in && (strings.HasPrefix(l, "frontend ") || strings.HasPrefix(l, "resolvers ") || strings.HasPrefix(l, "defaults")) {
			in = false
		}
		if !in || l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "server ") || strings.HasPrefix(l, "server-template ") {
			continue
		}
		lines = append(lines, l)
	}
	return lines
}

func haproxySlots(t *testing.T, cfg string) int {
	t.Helper()
	m := regexp.MustCompile(`(?m)^\s*server-template \S+ (\d+) `).FindStringSubmatch(cfg)
	if m == nil {
		t.Fatal("the in-cluster haproxy.cfg has no server-template")
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// TestHAProxy: the in-cluster HAProxy routes exactly as the loopback one
// make test-fleet runs (the session header first, the MCP session's stick
// table, the bearer; a consistent hash), both are valid to haproxy -c, and
// the ConfigMap the pods mount is this file.
func TestHAProxy(t *testing.T) {
	objs := render(t)
	inCluster, err := os.ReadFile(filepath.Join("k8s", "haproxy.cfg"))
	if err != nil {
		t.Fatal(err)
	}
	loopback, err := os.ReadFile(filepath.Join("haproxy", "haproxy.cfg"))
	if err != nil {
		t.Fatal(err)
	}
	a, b := routing(string(inCluster)), routing(string(loopback))
	if !slices.Equal(a, b) {
		t.Errorf("the in-cluster routing differs from haproxy/haproxy.cfg's:\n%s\n--- loopback:\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
	for _, want := range []string{
		"http-request set-var(txn.affinity) req.hdr(X-Chromegate-Session) if { req.hdr(X-Chromegate-Session) -m found }",
		"http-request set-var(txn.affinity) req.hdr(Authorization)",
		"balance hash var(txn.affinity)",
		"hash-type consistent",
		"stick match req.hdr(Mcp-Session-Id)",
		"stick store-response res.hdr(Mcp-Session-Id)",
	} {
		if !slices.Contains(a, want) {
			t.Errorf("the in-cluster haproxy.cfg lacks %q", want)
		}
	}
	if cm := findPrefix(t, objs, "ConfigMap", "haproxy"); cm.Data["haproxy.cfg"] != string(inCluster) {
		t.Error("the haproxy ConfigMap is not k8s/haproxy.cfg")
	}
	hd := decode[deployment](t, find(t, objs, "Deployment", "haproxy").Spec)
	hc := hd.Template.Spec.Containers[0]
	if i := slices.Index(hc.Args, "-f"); i < 0 || filepath.Dir(hc.Args[i+1]) != hc.VolumeMounts[0].MountPath {
		t.Errorf("haproxy's -f does not read the mounted ConfigMap: %q", hc.Args)
	}

	haproxy, err := exec.LookPath("haproxy")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("haproxy is not installed: make fleet-deps")
		}
		t.Skip("haproxy is not installed (make fleet-deps); the routing was compared, the syntax not checked")
	}
	for _, c := range []struct {
		file string
		env  []string
	}{
		{filepath.Join("k8s", "haproxy.cfg"), []string{"POD_NAMESPACE=chromegate"}},
		{filepath.Join("haproxy", "haproxy.cfg"), []string{"CG_BIND=127.0.0.1:18080", "CG_R1=127.0.0.1:18081", "CG_R2=127.0.0.1:18082", "CG_R3=127.0.0.1:18083"}},
	} {
		cmd := exec.Command(haproxy, "-c", "-f", c.file)
		cmd.Env = append(os.Environ(), c.env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("haproxy -c -f %s: %v\n%s", c.file, err, out)
		}
	}
}

// containerfile is what the checks read of image/Containerfile.
type containerfile struct {
	text    string
	uid     string
	env     map[string]string
	expose  []int
	copies  []string // sources of COPY from the build context
	argVals map[string][]string
}

func readContainerfile(t *testing.T) containerfile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("image", "Containerfile"))
	if err != nil {
		t.Fatal(err)
	}
	cf := containerfile{text: string(b), env: map[string]string{}, argVals: map[string][]string{}}
	// Join continuation lines, drop comments.
	var instrs []string
	var cur strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(l), "#") {
			continue
		}
		if s, ok := strings.CutSuffix(l, "\\"); ok {
			cur.WriteString(s + " ")
			continue
		}
		cur.WriteString(l)
		if s := strings.TrimSpace(cur.String()); s != "" {
			instrs = append(instrs, s)
		}
		cur.Reset()
	}
	for _, in := range instrs {
		f := strings.Fields(in)
		switch strings.ToUpper(f[0]) {
		case "USER":
			cf.uid, _, _ = strings.Cut(f[1], ":")
		case "ENV":
			for _, kv := range f[1:] {
				if k, v, ok := strings.Cut(kv, "="); ok {
					cf.env[k] = v
				}
			}
		case "EXPOSE":
			for _, p := range f[1:] {
				n, _ := strconv.Atoi(p)
				cf.expose = append(cf.expose, n)
			}
		case "COPY":
			if !strings.HasPrefix(f[1], "--from=") {
				cf.copies = append(cf.copies, f[1:len(f)-1]...)
			}
		case "ARG":
			if k, v, ok := strings.Cut(f[1], "="); ok {
				cf.argVals[k] = append(cf.argVals[k], v)
			}
		}
	}
	return cf
}

// TestImageDefinition: the Containerfile and build.sh agree with each
// other, with the binary and with the manifests: the pinned playwright-core
// is the binary's (cdp.DriverVersion), installed by the binary's own
// `chromegate setup` into the directory PLAYWRIGHT_DRIVER_PATH names;
// Debian's headless shell and Node.js are installed; every file COPY takes
// from the context is one build.sh puts there; the user is not root;
// build.sh is valid shell and names a Containerfile that exists.
func TestImageDefinition(t *testing.T) {
	cf := readContainerfile(t)
	if vs := cf.argVals["PLAYWRIGHT_CORE_VERSION"]; len(vs) == 0 {
		t.Error("the Containerfile does not pin PLAYWRIGHT_CORE_VERSION")
	} else {
		for _, v := range vs {
			if v != cdp.DriverVersion {
				t.Errorf("the Containerfile pins playwright-core %s; the binary needs %s (executor/cdp.DriverVersion)", v, cdp.DriverVersion)
			}
		}
	}
	for _, m := range regexp.MustCompile(`playwright-core@([0-9][\w.-]*)`).FindAllStringSubmatch(cf.text, -1) {
		if m[1] != cdp.DriverVersion {
			t.Errorf("the Containerfile names playwright-core@%s; the binary needs %s", m[1], cdp.DriverVersion)
		}
	}
	driver := cf.env["PLAYWRIGHT_DRIVER_PATH"]
	for _, want := range []string{
		"chromegate setup --driver-path " + driver,
		"COPY --from=driver " + driver + " " + driver,
		"chromium-headless-shell",
		"nodejs",
	} {
		if driver == "" || !strings.Contains(cf.text, want) {
			t.Errorf("the Containerfile lacks %q", want)
		}
	}
	if cf.uid == "" || cf.uid == "0" || cf.uid == "root" {
		t.Errorf("the image's USER is %q, not a non-root uid", cf.uid)
	}
	for _, k := range []string{"CHROMEGATE_DATA_DIR", "CHROMEGATE_CACHE_DIR", "HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"} {
		v := cf.env[k]
		if v != cf.env["CHROMEGATE_DATA_DIR"] && !strings.HasPrefix(v, "/tmp/") && v != "/tmp" {
			t.Errorf("%s=%q is neither under /tmp nor the data dir: the root filesystem is read-only", k, v)
		}
	}

	build, err := os.ReadFile(filepath.Join("image", "build.sh"))
	if err != nil {
		t.Fatal(err)
	}
	// build.sh puts the binary and the Containerfile into the context
	// ($CTX); COPY takes nothing else from it.
	placed := regexp.MustCompile(`\$CTX/([\w.-]+)`).FindAllStringSubmatch(string(build), -1)
	for _, src := range cf.copies {
		ok := false
		for _, p := range placed {
			ok = ok || p[1] == src
		}
		if !ok {
			t.Errorf("COPY %s: build.sh does not put it into the build context", src)
		}
	}
	if !strings.Contains(string(build), `"$HERE/Containerfile"`) {
		t.Error("build.sh does not build image/Containerfile")
	}
	for _, want := range []string{"CGO_ENABLED=0", "--isolation chroot", "--storage-driver vfs", "oci-archive:", "debootstrap"} {
		if !strings.Contains(string(build), want) {
			t.Errorf("build.sh lacks %q", want)
		}
	}
	if out, err := exec.Command("bash", "-n", filepath.Join("image", "build.sh")).CombinedOutput(); err != nil {
		t.Errorf("bash -n build.sh: %v\n%s", err, out)
	}
}
