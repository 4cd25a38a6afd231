package staticdiscovery

import "k8s.io/apimachinery/pkg/runtime/schema"

// shortNames are the short names the API server gives its built-in
// resources (kubectl's "po", "deploy"). They are the one thing here the
// client library does not know: the server's registry declares them. The
// end-to-end test TestOfflineAgreesWithDiscovery keeps this table equal to
// what a server of the library's version serves.
var shortNames = map[schema.GroupResource][]string{
	{Group: "", Resource: "componentstatuses"}:                             {"cs"},
	{Group: "", Resource: "configmaps"}:                                    {"cm"},
	{Group: "", Resource: "endpoints"}:                                     {"ep"},
	{Group: "", Resource: "events"}:                                        {"ev"},
	{Group: "", Resource: "limitranges"}:                                   {"limits"},
	{Group: "", Resource: "namespaces"}:                                    {"ns"},
	{Group: "", Resource: "nodes"}:                                         {"no"},
	{Group: "", Resource: "persistentvolumeclaims"}:                        {"pvc"},
	{Group: "", Resource: "persistentvolumes"}:                             {"pv"},
	{Group: "", Resource: "pods"}:                                          {"po"},
	{Group: "", Resource: "replicationcontrollers"}:                        {"rc"},
	{Group: "", Resource: "resourcequotas"}:                                {"quota"},
	{Group: "", Resource: "serviceaccounts"}:                               {"sa"},
	{Group: "", Resource: "services"}:                                      {"svc"},
	{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}: {"crd", "crds"},
	{Group: "apps", Resource: "daemonsets"}:                                {"ds"},
	{Group: "apps", Resource: "deployments"}:                               {"deploy"},
	{Group: "apps", Resource: "replicasets"}:                               {"rs"},
	{Group: "apps", Resource: "statefulsets"}:                              {"sts"},
	{Group: "autoscaling", Resource: "horizontalpodautoscalers"}:           {"hpa"},
	{Group: "batch", Resource: "cronjobs"}:                                 {"cj"},
	{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}: {"csr"},
	{Group: "events.k8s.io", Resource: "events"}:                           {"ev"},
	{Group: "networking.k8s.io", Resource: "ingresses"}:                    {"ing"},
	{Group: "networking.k8s.io", Resource: "ipaddresses"}:                  {"ip"},
	{Group: "networking.k8s.io", Resource: "networkpolicies"}:              {"netpol"},
	{Group: "policy", Resource: "poddisruptionbudgets"}:                    {"pdb"},
	{Group: "scheduling.k8s.io", Resource: "priorityclasses"}:              {"pc"},
	{Group: "storage.k8s.io", Resource: "storageclasses"}:                  {"sc"},
	{Group: "storage.k8s.io", Resource: "volumeattributesclasses"}:         {"vac"},
}
