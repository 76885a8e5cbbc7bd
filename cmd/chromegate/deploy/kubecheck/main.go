// Command kubecheck renders a kustomization with kustomize's own library
// (the code in kubectl kustomize) and decodes every object it yields
// strictly into the Kubernetes API's Go types (k8s.io/api): an unknown or
// misspelt field, a wrong type, a duplicate key or a kind it does not know
// fails, which is what `kubectl apply --validate=strict` would say of the
// schema, offline. It prints the rendered objects as one JSON array, for
// the checks of the deploy package's test to read.
//
// It is a module of its own so that the main module's dependency graph
// stays what the chromegate binary needs: cmd/chromegate/deploy's test
// runs it with `go run` from this directory.
//
//	go run . ../k8s
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// kinds are the objects the manifests may hold, by apiVersion and kind.
var kinds = map[string]func() any{
	"apps/v1/Deployment":                     func() any { return &appsv1.Deployment{} },
	"v1/Service":                             func() any { return &corev1.Service{} },
	"v1/ConfigMap":                           func() any { return &corev1.ConfigMap{} },
	"v1/Secret":                              func() any { return &corev1.Secret{} },
	"v1/ServiceAccount":                      func() any { return &corev1.ServiceAccount{} },
	"v1/Namespace":                           func() any { return &corev1.Namespace{} },
	"policy/v1/PodDisruptionBudget":          func() any { return &policyv1.PodDisruptionBudget{} },
	"networking.k8s.io/v1/NetworkPolicy":     func() any { return &networkingv1.NetworkPolicy{} },
	"autoscaling/v2/HorizontalPodAutoscaler": func() any { return &autoscalingv2.HorizontalPodAutoscaler{} },
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: kubecheck KUSTOMIZATION_DIR")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "kubecheck:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	resmap, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	out := make([]json.RawMessage, 0, resmap.Size())
	for _, r := range resmap.Resources() {
		y, err := r.AsYAML()
		if err != nil {
			return err
		}
		id := r.GetGvk().ApiVersion() + "/" + r.GetKind()
		mk, ok := kinds[id]
		if !ok {
			return fmt.Errorf("%s %s: not a kind these manifests may hold", id, r.GetName())
		}
		obj := mk()
		if err := yaml.UnmarshalStrict(y, obj); err != nil {
			return fmt.Errorf("%s %s: %w", id, r.GetName(), err)
		}
		j, err := yaml.YAMLToJSON(y)
		if err != nil {
			return err
		}
		out = append(out, bytes.TrimSpace(j))
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	return enc.Encode(out)
}
