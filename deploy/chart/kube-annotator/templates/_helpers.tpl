{{/* The chart's name. */}}
{{- define "kube-annotator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The objects' name: the release's, followed by the chart's unless it holds it. */}}
{{- define "kube-annotator.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "kube-annotator.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels of every object. */}}
{{- define "kube-annotator.labels" -}}
helm.sh/chart: {{ include "kube-annotator.chart" . }}
{{ include "kube-annotator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* Labels that select the Pods. */}}
{{- define "kube-annotator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kube-annotator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "kube-annotator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "kube-annotator.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name: required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The ConfigMap that holds the rules file. */}}
{{/* kube-annotator.inlineRules: rules.inline as a mapping, whether given as
one or as the text of a rules file (which keeps its comments and lines in
the ConfigMap). */}}
{{- define "kube-annotator.inlineRules" -}}
{{- $inline := required "rules.inline: the rules file, or set rules.existingConfigMap" .Values.rules.inline }}
{{- if kindIs "string" $inline }}
{{- $file := fromYaml $inline }}
{{- if hasKey $file "Error" }}
{{- fail (printf "rules.inline: the text of the rules file is not a YAML mapping: %s" (get $file "Error")) }}
{{- end }}
{{- toYaml $file }}
{{- else }}
{{- toYaml $inline }}
{{- end }}
{{- end }}

{{- define "kube-annotator.rulesConfigMap" -}}
{{- default (printf "%s-rules" (include "kube-annotator.fullname" .)) .Values.rules.existingConfigMap }}
{{- end }}

{{- define "kube-annotator.metricsService" -}}
{{- printf "%s-metrics" (include "kube-annotator.fullname" . | trunc 55 | trimSuffix "-") }}
{{- end }}

{{- define "kube-annotator.leaseName" -}}
{{- default (include "kube-annotator.fullname" .) .Values.leaderElection.id }}
{{- end }}

{{- define "kube-annotator.shardGroup" -}}
{{- default (include "kube-annotator.fullname" .) .Values.sharding.group }}
{{- end }}

{{- define "kube-annotator.image" -}}
{{- $tag := default .Chart.AppVersion .Values.image.tag }}
{{- .Values.image.repository }}{{ if $tag }}:{{ $tag }}{{ end }}{{ if .Values.image.digest }}@{{ .Values.image.digest }}{{ end }}
{{- end }}

{{/* The arguments of `kube-annotator run`. */}}
{{- define "kube-annotator.args" -}}
- run
- --rules=/etc/kube-annotator/{{ .Values.rules.key }}
- --field-manager={{ .Values.fieldManager }}
- --metrics-bind-address=:8080
- --health-probe-bind-address=:8081
{{- if eq .Values.sharding.mode "none" }}
- --leader-elect
- --leader-election-id={{ include "kube-annotator.leaseName" . }}
{{- else if eq .Values.sharding.mode "static" }}
- --shard=$(SHARD)
- --total-shards={{ .Values.replicas }}
{{- else if eq .Values.sharding.mode "group" }}
- --shard-group={{ include "kube-annotator.shardGroup" . }}
{{- end }}
{{- if .Values.events }}
- --events
{{- end }}
{{- if .Values.admissionPolicies.enabled }}
- --admission-policies
{{- end }}
{{- if kindIs "slice" .Values.excludeNamespaces }}
- --exclude-namespaces={{ join "," .Values.excludeNamespaces }}
{{- end }}
{{- range .Values.extraArgs }}
- {{ . | quote }}
{{- end }}
{{- end }}
