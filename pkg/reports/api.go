package reports

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// The API the reports are written in: openreports.io/v1alpha1, the
// successor of wgpolicyk8s.io's PolicyReport. Its Go module is not a
// dependency: these are the fields written, as the published API names
// them.
var (
	// ReportResource holds the Report of a namespace.
	ReportResource = schema.GroupVersionResource{Group: "openreports.io", Version: "v1alpha1", Resource: "reports"}
	// ClusterReportResource holds the report of cluster-scoped objects.
	ClusterReportResource = schema.GroupVersionResource{Group: "openreports.io", Version: "v1alpha1", Resource: "clusterreports"}
)

const (
	// Source is every result's source.
	Source = "kube-annotator"
	// ManagedByLabel, set to ManagedBy, marks the reports written.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedBy      = "kube-annotator"
	// OmittedAnnotation says how many results a report leaves out, past
	// its cap; its summary counts them.
	OmittedAnnotation = "reports.kube-annotator.io/omitted-results"
	// ResultFail is the result of a key not as the rules want.
	ResultFail = "fail"
)

// Report is a Report or a ClusterReport, as written.
type Report struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Metadata   Metadata `json:"metadata"`
	Summary    Summary  `json:"summary"`
	Results    []Result `json:"results"`
}

// Metadata is the part of a report's metadata written.
type Metadata struct {
	Name        string            `json:"name"`
	Namespace   string            `json:"namespace,omitempty"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Summary counts a report's results by result, those left out included.
type Summary struct {
	Pass  int `json:"pass"`
	Fail  int `json:"fail"`
	Warn  int `json:"warn"`
	Error int `json:"error"`
	Skip  int `json:"skip"`
}

// Result is the verdict of one rule on one key of one object.
type Result struct {
	Source  string `json:"source"`
	Policy  string `json:"policy"`
	Rule    string `json:"rule"`
	Result  string `json:"result"`
	Message string `json:"message,omitempty"`
	// Resources are the object, as a core ObjectReference.
	Resources  []ObjectReference `json:"resources"`
	Properties map[string]string `json:"properties,omitempty"`
}

// ObjectReference names an object in a result.
type ObjectReference struct {
	APIVersion string    `json:"apiVersion"`
	Kind       string    `json:"kind"`
	Namespace  string    `json:"namespace,omitempty"`
	Name       string    `json:"name"`
	UID        types.UID `json:"uid,omitempty"`
}
