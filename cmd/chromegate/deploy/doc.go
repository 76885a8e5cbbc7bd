// Package deploy holds no code: it is where chromegate's packaging for a
// fleet lives, and its test keeps that packaging true to the binary.
//
//   - image/Containerfile: the container image (Debian, Debian's Chromium
//     headless shell, Node.js, the Playwright driver at the version the
//     binary pins, the static binary; user 10001; writes only /tmp and the
//     data dir /var/lib/chromegate). image/build.sh builds it without a
//     daemon (buildah, from a debootstrap'd Debian) for `make image`.
//   - k8s/: the Kubernetes manifests, a kustomization (kubectl apply -k):
//     the replicas' Deployment, their headless Service, PodDisruptionBudget
//     and HorizontalPodAutoscaler; HAProxy routing each session to its
//     replica (k8s/haproxy.cfg, the routing of haproxy/haproxy.cfg); the
//     NetworkPolicies; the fleet's Secret and OPA configuration.
//   - kubecheck/: a module of its own that renders k8s/ with kustomize's
//     library and decodes every object strictly into the Kubernetes API's
//     types, so that the main module never depends on k8s.io.
//
// The rules the test holds them to: every pod runs as non-root, with no
// capability, no privilege escalation and a read-only root filesystem;
// probes ask serve's /readyz and /healthz on the port its --metrics-addr
// names; the network is denied by default and opened only to the fleet's
// services and the listed targets (never private, loopback or link-local
// addresses); the in-cluster HAProxy hashes sessions exactly as the
// loopback one; the OPA configuration is one OPA's plugin manager takes;
// the image's user, paths, ports and Playwright version are the ones the
// manifests and the binary expect.
package deploy
