{{/*
The ClusterRole's and Role's rules, as `kube-annotator rbac` computes them
for the same rules (test/chart proves it for every ci/ values file).
Resource names resolve through files/resources.yaml, which is what the
rbac command's resolver answers for every name of every resource a
Kubernetes API server serves (generated: make chart-resources). A name it
does not hold is taken as resource.group, namespaced, as rbac takes a
custom resource the cluster does not serve yet.
*/}}

{{/* kube-annotator.resolve: dict name, where, table -> {group, resource, namespaced} as YAML. */}}
{{- define "kube-annotator.resolve" -}}
{{- $known := index .table .name }}
{{- if $known }}
{{- toYaml $known }}
{{- else if contains "." .name }}
{{- $parts := splitList "." .name }}
{{- $group := rest $parts | join "." }}
{{- if and (gt (len $parts) 2) (regexMatch "^v[0-9]+((alpha|beta)[0-9]+)?$" (index $parts 1)) }}
{{- $group = rest (rest $parts) | join "." }}
{{- end }}
group: {{ $group | quote }}
resource: {{ first $parts | quote }}
namespaced: true
{{- else }}
{{- fail (printf "%s: %q is not a Kubernetes resource the chart knows; name a custom resource by its plural and group, e.g. frigates.ship.nwiizo.dev" .where .name) }}
{{- end }}
{{- end }}

{{/*
kube-annotator.tenants: rules.inline's tenants section, with the defaults
of the fields RBAC depends on (pkg/rules/tenantfile), as YAML: configMap
("" with configMapSelector), namespaceSelector, resources and
valueForms; {} without a section. What any tenant's rules may need is
granted as for a rule naming every resource of resources in every
namespace and reading what the allowed value forms read by default
(pkg/tenants StandIn), besides the tenants' ConfigMaps.
*/}}
{{- define "kube-annotator.tenants" -}}
{{- if not .Values.rules.existingConfigMap }}
{{- with (include "kube-annotator.inlineRules" . | fromYaml).tenants }}
{{- $configMap := "kube-annotator-rules" }}
{{- if or (hasKey . "configMap") (hasKey . "configMapSelector") }}
{{- $configMap = get . "configMap" | default "" }}
{{- end }}
configMap: {{ $configMap | quote }}
namespaceSelector: {{ get . "namespaceSelector" | default "" | quote }}
resources: {{ get . "resources" | default list | toJson }}
valueForms: {{ get . "valueForms" | default (list "value" "jsonPath" "fromNamespace" "fromOwner") | toJson }}
{{- end }}
{{- end }}
{{- end }}

{{/*
kube-annotator.reads: what the inline rules read besides the objects
they write, as YAML:
  nodes: whether a value or copy item reads a Pod's Node (fromNode);
  owners: [{name, where}], the owner resources, as written, that fromOwner
    values and copy items and CEL's ownerObject walk through;
  refs: [{name, where, named, byName}], the resource of each object
    fromRef reads; named is the only name read ("" for any), byName says
    it is given by name: rather than among names:.
It walks every value form of a rule once: each key's, those of its default
chain, and each copy item. A rule reads ownerObject where it has the field,
or where its when: or a cel: holds the identifier ownerObject (the text,
not the parsed expression): then through the default owner resources.
*/}}
{{- define "kube-annotator.reads" -}}
{{- $nodes := false }}
{{- $walks := list }}
{{- $refs := list }}
{{- if not .Values.rules.existingConfigMap }}
{{- range $i, $rule := (include "kube-annotator.inlineRules" . | fromYaml).rules }}
{{- $where := printf "rules.inline.rules[%d]" $i }}
{{- $forms := get $rule "copy" | default list }}
{{- range $field := list "annotations" "labels" }}
{{- range $key, $v := get $rule $field | default dict }}
{{- $form := $v }}
{{- /* A key's value form and the (at most 4) of its default chain. */}}
{{- range until 5 }}
{{- if kindIs "map" $form }}
{{- $forms = append $forms $form }}
{{- $form = get $form "default" }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- $readsOwner := regexMatch "\\bownerObject\\b" (get $rule "when" | default "" | toString) }}
{{- range $form := $forms }}
{{- if and (hasKey $form "cel") (regexMatch "\\bownerObject\\b" (toJson $form.cel)) }}
{{- $readsOwner = true }}
{{- end }}
{{- if hasKey $form "fromNode" }}
{{- $nodes = true }}
{{- end }}
{{- with $form.fromOwner }}
{{- $walks = append $walks (dict "walk" . "where" $where) }}
{{- end }}
{{- with $form.fromRef }}
{{- /* fromRef names a core resource with its version too (configmaps.v1), as rules read it: the resource. */}}
{{- $ref := dict "name" (trimSuffix ".v1" .resource) "where" (printf "%s: fromRef.resource" $where) }}
{{- if .name }}
{{- $refs = append $refs (merge (dict "named" .name "byName" true) $ref) }}
{{- else }}
{{- range .names | default (list "") }}
{{- $refs = append $refs (merge (dict "named" . "byName" false) $ref) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- if or (hasKey $rule "ownerObject") $readsOwner }}
{{- $walks = append $walks (dict "walk" (get $rule "ownerObject" | default dict) "where" $where) }}
{{- end }}
{{- end }}
{{- end }}
{{- with include "kube-annotator.tenants" . | fromYaml }}
{{- if has "fromNode" .valueForms }}
{{- $nodes = true }}
{{- end }}
{{- if has "fromOwner" .valueForms }}
{{- $walks = append $walks (dict "walk" dict "where" "rules.inline.tenants") }}
{{- end }}
{{- end }}
{{- $owners := list }}
{{- range $walks }}
{{- $where := printf "%s: an owner resource" .where }}
{{- /* By default the workload resources Kubernetes owns Pods with; owner: among them. */}}
{{- $through := .walk.through | default (list "replicasets.apps" "deployments.apps" "statefulsets.apps" "daemonsets.apps" "jobs.batch" "cronjobs.batch") }}
{{- if .walk.owner }}
{{- $through = append $through .walk.owner }}
{{- end }}
{{- range $through }}
{{- $owners = append $owners (dict "name" . "where" $where) }}
{{- end }}
{{- end }}
nodes: {{ $nodes }}
owners: {{ toJson $owners }}
refs: {{ toJson $refs }}
{{- end }}

{{/* kube-annotator.byResource: {"resource.group": {group, resource, names}} -> its values sorted by key, each's names sorted once, as a JSON list. */}}
{{- define "kube-annotator.byResource" -}}
{{- $out := list }}
{{- range $k := keys . | sortAlpha }}
{{- $r := index $ $k }}
{{- $out = append $out (dict "group" $r.group "resource" $r.resource "names" ($r.names | uniq | sortAlpha)) }}
{{- end }}
{{- toJson $out }}
{{- end }}

{{/* kube-annotator.grants: {groups: {group: [resources]} written cluster-wide, watched: {group: [resources]} written only in written: {namespace: {group: [resources]}}, watchNamespaces: bool, and kube-annotator.readGrants' related, named and params} as YAML. */}}
{{- define "kube-annotator.grants" -}}
{{- $table := .Files.Get "files/resources.yaml" | fromYaml }}
{{- $targets := list }}
{{- if not .Values.rules.existingConfigMap }}
{{- range $i, $rule := (include "kube-annotator.inlineRules" . | fromYaml).rules }}
{{- range $j, $name := $rule.resources }}
{{- $targets = append $targets (dict "name" $name "where" (printf "rules.inline.rules[%d].resources[%d]" $i $j) "selectsByNamespace" (not (empty (get $rule "namespaceSelector"))) "namespaces" (get $rule "namespaces" | default list)) }}
{{- end }}
{{- end }}
{{- else if and .Values.rbac.create (empty .Values.rbac.extraResources) }}
{{- fail (printf "rbac.extraResources: list the resources the rules in ConfigMap %q name (or set rbac.create=false and grant them yourself)" .Values.rules.existingConfigMap) }}
{{- end }}
{{- /* Tenants' rules may write their resources in any namespace tenants write rules in: as a rule naming no namespace. */}}
{{- range $i, $name := (include "kube-annotator.tenants" . | fromYaml).resources }}
{{- $targets = append $targets (dict "name" $name "where" (printf "rules.inline.tenants.resources[%d]" $i) "selectsByNamespace" false "namespaces" list) }}
{{- end }}
{{- /* The chart cannot see whether these are selected by namespace labels: it grants what that needs. */}}
{{- range $i, $name := .Values.rbac.extraResources }}
{{- $targets = append $targets (dict "name" $name "where" (printf "rbac.extraResources[%d]" $i) "selectsByNamespace" true "namespaces" list) }}
{{- end }}
{{- /* A resource whose every rule names its namespaces literally (no glob) is written only there. */}}
{{- $scopes := dict }}
{{- $watchNamespaces := false }}
{{- range $targets }}
{{- $r := include "kube-annotator.resolve" (dict "name" .name "where" .where "table" $table) | fromYaml }}
{{- $k := printf "%s/%s" $r.group $r.resource }}
{{- $s := get $scopes $k | default (dict "group" $r.group "resource" $r.resource "cluster" false "namespaces" list) }}
{{- $confined := and $r.namespaced (not (empty .namespaces)) }}
{{- range .namespaces }}
{{- if regexMatch "[*?\\[\\\\]" . }}
{{- $confined = false }}
{{- end }}
{{- end }}
{{- if $confined }}
{{- $_ := set $s "namespaces" (concat $s.namespaces .namespaces | uniq) }}
{{- else }}
{{- $_ := set $s "cluster" true }}
{{- end }}
{{- $_ := set $scopes $k $s }}
{{- if or $r.namespaced .selectsByNamespace }}
{{- $watchNamespaces = true }}
{{- end }}
{{- end }}
{{- $groups := dict }}
{{- $watched := dict }}
{{- $written := dict }}
{{- range $s := $scopes }}
{{- if $s.cluster }}
{{- $_ := set $groups $s.group (append (index $groups $s.group | default list) $s.resource) }}
{{- else }}
{{- $_ := set $watched $s.group (append (index $watched $s.group | default list) $s.resource) }}
{{- range $ns := $s.namespaces }}
{{- $in := index $written $ns | default dict }}
{{- $_ := set $in $s.group (append (index $in $s.group | default list) $s.resource) }}
{{- $_ := set $written $ns $in }}
{{- end }}
{{- end }}
{{- end }}
groups: {{ toJson $groups }}
watched: {{ toJson $watched }}
written: {{ toJson $written }}
watchNamespaces: {{ $watchNamespaces }}
{{ include "kube-annotator.readGrants" (dict "root" . "ruled" $scopes) }}
{{- end }}

{{/* kube-annotator.readGrants: dict root, ruled (the targets' "group/resource" keys) -> the grants of what the rules read (kube-annotator.reads), as YAML: related: [{group, resource}] listed and watched; named: [{group, resource, names}] listed and watched by name; params: [{group, resource, names}] got by name, with admission policies. */}}
{{- define "kube-annotator.readGrants" -}}
{{- $table := .root.Files.Get "files/resources.yaml" | fromYaml }}
{{- $ruled := .ruled }}
{{- $reads := include "kube-annotator.reads" .root | fromYaml }}
{{- /* Listed and watched: the Nodes, then the owner resources, then those referred to by a field, each sorted by resource and group, once, and only where no grant of a target covers them. */}}
{{- $every := list }}
{{- if $reads.nodes }}
{{- $every = append $every (dict "group" "" "resource" "nodes") }}
{{- end }}
{{- /* rbac.extraReadResources, read by rules the chart cannot see, are sorted with the owner resources. */}}
{{- $listed := $reads.owners }}
{{- range $i, $name := .root.Values.rbac.extraReadResources }}
{{- $listed = append $listed (dict "name" $name "where" (printf "rbac.extraReadResources[%d]" $i)) }}
{{- end }}
{{- range $from := list $listed $reads.refs }}
{{- $sorted := dict }}
{{- range $from }}
{{- if not .named }}
{{- $r := include "kube-annotator.resolve" (dict "name" .name "where" .where "table" $table) | fromYaml }}
{{- $_ := set $sorted (printf "%s.%s" $r.resource $r.group) $r }}
{{- end }}
{{- end }}
{{- range keys $sorted | sortAlpha }}
{{- $every = append $every (index $sorted .) }}
{{- end }}
{{- end }}
{{- $related := list }}
{{- $read := dict }}
{{- range $every }}
{{- $k := printf "%s/%s" .group .resource }}
{{- if not (or (hasKey $read $k) (hasKey $ruled $k)) }}
{{- $related = append $related (dict "group" .group "resource" .resource) }}
{{- end }}
{{- $_ := set $read $k true }}
{{- end }}
{{- /* The objects referred to by name only (ConfigMaps) are listed and watched by their names, unless every object of their resource is; with admission policies, those named by name: are got too, by their names, whatever else is granted. */}}
{{- $named := dict }}
{{- $params := dict }}
{{- range $reads.refs }}
{{- $name := .named }}
{{- if $name }}
{{- $r := include "kube-annotator.resolve" (dict "name" .name "where" .where "table" $table) | fromYaml }}
{{- $k := printf "%s/%s" $r.group $r.resource }}
{{- $sk := printf "%s.%s" $r.resource $r.group }}
{{- $to := list }}
{{- if not (or (hasKey $read $k) (hasKey $ruled $k)) }}
{{- $to = append $to $named }}
{{- end }}
{{- if .byName }}
{{- $to = append $to $params }}
{{- end }}
{{- range $m := $to }}
{{- $n := get $m $sk | default (dict "group" $r.group "resource" $r.resource "names" list) }}
{{- $_ := set $n "names" (append $n.names $name) }}
{{- $_ := set $m $sk $n }}
{{- end }}
{{- end }}
{{- end }}
related: {{ toJson $related }}
named: {{ include "kube-annotator.byResource" $named }}
params: {{ include "kube-annotator.byResource" $params }}
{{- end }}

{{/* kube-annotator.clusterRules: per API group, get, list, watch and patch on the resources written cluster-wide, then list and watch on those written only in some namespaces; then namespaces, the related objects read, the tenants' ConfigMaps (their namespaces, when selected by label and not watched already, and events, when not on), events, admission policies and the objects their params name. */}}
{{- define "kube-annotator.clusterRules" -}}
{{- $grants := include "kube-annotator.grants" . | fromYaml }}
{{- range $group := concat (keys $grants.groups) (keys $grants.watched) | uniq | sortAlpha }}
{{- with index $grants.groups $group }}
- apiGroups: [{{ $group | quote }}]
  resources: {{ . | uniq | sortAlpha | toJson }}
  verbs: [get, list, watch, patch]
{{- end }}
{{- with index $grants.watched $group }}
- apiGroups: [{{ $group | quote }}]
  resources: {{ . | uniq | sortAlpha | toJson }}
  verbs: [list, watch]
{{- end }}
{{- end }}
{{- if and $grants.watchNamespaces (not (has "namespaces" (index $grants.groups "" | default list))) }}
- apiGroups: [""]
  resources: [namespaces]
  verbs: [list, watch]
{{- end }}
{{- range $grants.related }}
- apiGroups: [{{ .group | quote }}]
  resources: [{{ .resource | quote }}]
  verbs: [list, watch]
{{- end }}
{{- range $grants.named }}
- apiGroups: [{{ .group | quote }}]
  resources: [{{ .resource | quote }}]
  resourceNames: {{ toJson .names }}
  verbs: [list, watch]
{{- end }}
{{- with include "kube-annotator.tenants" . | fromYaml }}
- apiGroups: [""]
  resources: [configmaps]
  {{- with .configMap }}
  resourceNames: [{{ . | quote }}]
  {{- end }}
  verbs: [get, list, watch, patch]
{{- if and .namespaceSelector (not $grants.watchNamespaces) (not (has "namespaces" (index $grants.groups "" | default list))) }}
- apiGroups: [""]
  resources: [namespaces]
  verbs: [list, watch]
{{- end }}
{{- if not $.Values.events }}
- apiGroups: [events.k8s.io]
  resources: [events]
  verbs: [create, patch]
{{- end }}
{{- end }}
{{- if .Values.events }}
- apiGroups: [events.k8s.io]
  resources: [events]
  verbs: [create, patch]
{{- end }}
{{- if .Values.admissionPolicies.enabled }}
- apiGroups: [admissionregistration.k8s.io]
  resources: [mutatingadmissionpolicies, mutatingadmissionpolicybindings]
  verbs: [list, create, patch, delete]
{{- range $grants.params }}
- apiGroups: [{{ .group | quote }}]
  resources: [{{ .resource | quote }}]
  resourceNames: {{ toJson .names }}
  verbs: [get]
{{- end }}
{{- end }}
{{- end }}

{{/* kube-annotator.roleRules: in the release's namespace, the record's ConfigMap and the Leases of leader election or of the shard group. */}}
{{- define "kube-annotator.roleRules" -}}
- apiGroups: [""]
  resources: [configmaps]
  verbs: [create]
- apiGroups: [""]
  resources: [configmaps]
  resourceNames: [{{ printf "%s-resources" .Values.fieldManager | quote }}]
  verbs: [get, update]
{{- if eq .Values.sharding.mode "none" }}
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  verbs: [create]
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  resourceNames: [{{ include "kube-annotator.leaseName" . | quote }}]
  verbs: [get, update]
{{- else if eq .Values.sharding.mode "group" }}
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  verbs: [create, get, list, watch, update, delete]
{{- end }}
{{- include "kube-annotator.writtenRules" (dict "root" . "namespace" .Release.Namespace) }}
{{- end }}

{{/* kube-annotator.writtenNamespaces: the namespaces, other than the release's, where resources are written without a cluster-wide grant, as a JSON list. */}}
{{- define "kube-annotator.writtenNamespaces" -}}
{{- $grants := include "kube-annotator.grants" . | fromYaml }}
{{- without (keys $grants.written | sortAlpha) .Release.Namespace | toJson }}
{{- end }}

{{/* kube-annotator.writtenRules: dict root, namespace -> get and patch on the resources written only in some namespaces, in namespace, one rule per API group. */}}
{{- define "kube-annotator.writtenRules" -}}
{{- $grants := include "kube-annotator.grants" .root | fromYaml }}
{{- $in := index $grants.written .namespace | default dict }}
{{- range $group := keys $in | sortAlpha }}
- apiGroups: [{{ $group | quote }}]
  resources: {{ index $in $group | uniq | sortAlpha | toJson }}
  verbs: [get, patch]
{{- end }}
{{- end }}
