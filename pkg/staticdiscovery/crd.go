package staticdiscovery

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/yaml"
)

// crdKind is the kind of a CustomResourceDefinition, and crdAPIVersion the
// one version of it that servers still serve.
const (
	crdKind       = "CustomResourceDefinition"
	crdAPIVersion = "apiextensions.k8s.io/v1"
)

// ReadCRDs reads the CustomResourceDefinitions (apiextensions.k8s.io/v1)
// in the YAML files at paths, each of one or more documents (a List of
// them too, as kubectl prints it), and returns the resources they define,
// one list per group-version, at their served versions, and the schemas
// of their objects, as a server publishes them (crdSchema), whose
// Documents are those a server serves. Documents of other kinds are
// skipped; a file with no CRD is an error. Errors name the file, the
// document and the field.
func ReadCRDs(paths ...string) ([]*metav1.APIResourceList, CRDSchemas, error) {
	builtIn, err := BuiltIn()
	if err != nil {
		return nil, nil, err
	}
	builtInGroups := map[string]bool{}
	for _, l := range builtIn {
		gv, _ := schema.ParseGroupVersion(l.GroupVersion)
		builtInGroups[gv.Group] = true
	}
	r := crdReader{builtInGroups: builtInGroups, defined: map[schema.GroupResource]string{}, lists: map[schema.GroupVersion]*metav1.APIResourceList{},
		schemas: CRDSchemas{}}
	var errs []error
	for _, path := range paths {
		errs = append(errs, r.readFile(path))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	return r.out, r.schemas, nil
}

// crdReader collects the resources of CRDs, file after file.
type crdReader struct {
	builtInGroups map[string]bool
	// defined says where each resource was defined, for the error that
	// says it is defined twice.
	defined map[schema.GroupResource]string
	lists   map[schema.GroupVersion]*metav1.APIResourceList
	out     []*metav1.APIResourceList // lists, in the order first defined
	schemas CRDSchemas                // the schemas of the resources' objects
}

// readFile reads the CRDs in the file at path.
func (r *crdReader) readFile(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	docs := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	found := 0
	var errs []error
	for n := 1; ; n++ {
		doc, err := docs.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: document %d: %w", path, n, err)
		}
		where := fmt.Sprintf("%s: document %d", path, n)
		crds, err := decodeCRDs(doc)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", where, err))
			continue
		}
		for i, crd := range crds {
			at := where
			if len(crds) > 1 || crd.list {
				at = fmt.Sprintf("%s: items[%d]", where, i)
			}
			if crd.CustomResourceDefinition == nil {
				continue
			}
			found++
			if err := r.add(crd.CustomResourceDefinition, at); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if len(errs) == 0 && found == 0 {
		return fmt.Errorf("%s: no CustomResourceDefinition (%s) in the file", path, crdAPIVersion)
	}
	return errors.Join(errs...)
}

// decodedCRD is a document, or an item of a List, decoded: nil when it is
// of another kind.
type decodedCRD struct {
	*apiextensionsv1.CustomResourceDefinition
	list bool // an item of a List
}

// decodeCRDs decodes one YAML document: a CRD, a List of objects, or an
// object of another kind, which yields nothing.
func decodeCRDs(doc []byte) ([]decodedCRD, error) {
	var head struct {
		metav1.TypeMeta `json:",inline"`
		Items           []jsonRaw `json:"items"`
	}
	if err := yaml.Unmarshal(doc, &head); err != nil {
		return nil, err
	}
	switch {
	case head.Kind == "List":
		var out []decodedCRD
		for i, item := range head.Items {
			crds, err := decodeCRDs(item)
			if err != nil {
				return nil, fmt.Errorf("items[%d]: %w", i, err)
			}
			for _, c := range crds {
				out = append(out, decodedCRD{CustomResourceDefinition: c.CustomResourceDefinition, list: true})
			}
		}
		return out, nil
	case head.Kind != crdKind:
		return []decodedCRD{{}}, nil
	case head.APIVersion != crdAPIVersion:
		return nil, fmt.Errorf("apiVersion: %q: only %s is read (servers dropped apiextensions.k8s.io/v1beta1 in Kubernetes 1.22)", head.APIVersion, crdAPIVersion)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(doc, crd); err != nil {
		return nil, err
	}
	return []decodedCRD{{CustomResourceDefinition: crd}}, nil
}

// jsonRaw is an item of a List, kept as its JSON.
type jsonRaw []byte

// UnmarshalJSON keeps data.
func (j *jsonRaw) UnmarshalJSON(data []byte) error {
	*j = append((*j)[:0], data...)
	return nil
}

// add adds the resource crd, read at where, defines.
func (r *crdReader) add(crd *apiextensionsv1.CustomResourceDefinition, where string) error {
	if crd.Name != "" {
		where += fmt.Sprintf(" (%s %s)", crdKind, crd.Name)
	}
	res, versions, err := r.resource(crd)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	gr := schema.GroupResource{Group: crd.Spec.Group, Resource: res.Name}
	if prev, ok := r.defined[gr]; ok {
		return fmt.Errorf("%s: %s is defined twice, also at %s", where, gr, prev)
	}
	r.defined[gr] = where
	for _, v := range versions {
		gv := schema.GroupVersion{Group: crd.Spec.Group, Version: v.Name}
		l := r.lists[gv]
		if l == nil {
			l = &metav1.APIResourceList{GroupVersion: gv.String()}
			r.lists[gv] = l
			r.out = append(r.out, l)
		}
		l.APIResources = append(l.APIResources, res)
		s, err := crdSchema(crd, v)
		if err != nil {
			return fmt.Errorf("%s: spec.versions: version %q: schema: %w", where, v.Name, err)
		}
		if r.schemas[gv] == nil {
			r.schemas[gv] = map[string]*spec.Schema{}
		}
		r.schemas[gv][res.Kind] = s
	}
	return nil
}

// resource returns the resource crd defines, as discovery lists it, and
// its served versions; or the first field that does not allow it.
func (r *crdReader) resource(crd *apiextensionsv1.CustomResourceDefinition) (metav1.APIResource, []apiextensionsv1.CustomResourceDefinitionVersion, error) {
	s := crd.Spec
	names := s.Names
	switch {
	case s.Group == "":
		return metav1.APIResource{}, nil, errors.New("spec.group: must be set")
	case r.builtInGroups[s.Group]:
		return metav1.APIResource{}, nil, fmt.Errorf("spec.group: %q is a built-in group, which a CRD cannot add to", s.Group)
	case names.Plural == "":
		return metav1.APIResource{}, nil, errors.New("spec.names.plural: must be set")
	case names.Plural != strings.ToLower(names.Plural):
		return metav1.APIResource{}, nil, fmt.Errorf("spec.names.plural: %q must be lowercase", names.Plural)
	case names.Kind == "":
		return metav1.APIResource{}, nil, errors.New("spec.names.kind: must be set")
	case crd.Name != names.Plural+"."+s.Group:
		return metav1.APIResource{}, nil, fmt.Errorf("metadata.name: %q must be spec.names.plural and spec.group: %s.%s", crd.Name, names.Plural, s.Group)
	case s.Scope != apiextensionsv1.NamespaceScoped && s.Scope != apiextensionsv1.ClusterScoped:
		return metav1.APIResource{}, nil, fmt.Errorf("spec.scope: %q must be %s or %s", s.Scope, apiextensionsv1.NamespaceScoped, apiextensionsv1.ClusterScoped)
	}
	var versions []apiextensionsv1.CustomResourceDefinitionVersion
	for i, v := range s.Versions {
		if v.Name == "" {
			return metav1.APIResource{}, nil, fmt.Errorf("spec.versions[%d].name: must be set", i)
		}
		if v.Served {
			versions = append(versions, v)
		}
	}
	if len(versions) == 0 {
		return metav1.APIResource{}, nil, errors.New("spec.versions: no version is served")
	}
	singular := names.Singular
	if singular == "" {
		singular = strings.ToLower(names.Kind)
	}
	return metav1.APIResource{
		Name: names.Plural, SingularName: singular, Namespaced: s.Scope == apiextensionsv1.NamespaceScoped, Kind: names.Kind,
		Verbs:      metav1.Verbs{"delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"},
		ShortNames: names.ShortNames, Categories: names.Categories,
	}, versions, nil
}
