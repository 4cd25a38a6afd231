package staticdiscovery

import (
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// BuiltIn returns the built-in resources of the Kubernetes version the
// client library was built for (KubeVersion), one list per group-version,
// in every version the library has a typed client for that Kubernetes
// still serves: alpha and beta versions too, which a cluster may not
// enable. Subresources are left out. The lists are shared: callers must
// not modify them.
//
// The resources come from zz_generated.builtin.go, which the test
// TestBuiltInTable derives from the typed clientsets of Kubernetes, of its
// CustomResourceDefinitions and of its aggregation layer, and keeps equal
// to what they say; only the short names are the API server's (shortNames).
var BuiltIn = sync.OnceValues(func() ([]*metav1.APIResourceList, error) {
	var out []*metav1.APIResourceList
	for _, row := range builtInTable {
		if len(out) == 0 || out[len(out)-1].GroupVersion != row.groupVersion {
			out = append(out, &metav1.APIResourceList{GroupVersion: row.groupVersion})
		}
		gv, err := schema.ParseGroupVersion(row.groupVersion)
		if err != nil {
			return nil, err
		}
		l := out[len(out)-1]
		l.APIResources = append(l.APIResources, metav1.APIResource{
			Name: row.name, SingularName: strings.ToLower(row.kind), Namespaced: row.namespaced, Kind: row.kind,
			Verbs: strings.Fields(row.verbs), ShortNames: shortNames[gv.WithResource(row.name).GroupResource()],
		})
	}
	return out, nil
})

// KubeVersion is the Kubernetes version, major.minor, the library was
// built for: the version whose built-in resources BuiltIn returns.
func KubeVersion() string { return kubeVersion }

// A builtInRow is one built-in resource at one version, as the typed
// clients name it; rows of one group-version are together.
type builtInRow struct {
	groupVersion, name, kind string
	namespaced               bool
	verbs                    string // separated by spaces
}
