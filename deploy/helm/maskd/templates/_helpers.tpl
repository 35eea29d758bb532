{{/*
Standard helpers (the layout `helm create` generates).
*/}}

{{/* Chart name, overridable with nameOverride. */}}
{{- define "maskd.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Fully qualified name: RELEASE-maskd, or RELEASE when it already contains the chart
name. Truncated to 63 characters (DNS label limit).
*/}}
{{- define "maskd.fullname" -}}
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

{{/* The headless Service's name (leaves room for the suffix within 63). */}}
{{- define "maskd.headlessName" -}}
{{- printf "%s-headless" (include "maskd.fullname" . | trunc 54 | trimSuffix "-") }}
{{- end }}

{{/* chart label value: NAME-VERSION. */}}
{{- define "maskd.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels on every resource. */}}
{{- define "maskd.labels" -}}
helm.sh/chart: {{ include "maskd.chart" . }}
{{ include "maskd.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: maskd
{{- end }}

{{/* Labels the Services, PDB and ServiceMonitor select pods by (never change them). */}}
{{- define "maskd.selectorLabels" -}}
app.kubernetes.io/name: {{ include "maskd.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* ServiceAccount to use. */}}
{{- define "maskd.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "maskd.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* maskd image reference. */}}
{{- define "maskd.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}

{{/* tokenizer-fetcher image reference. */}}
{{- define "maskd.fetcherImage" -}}
{{- $image := .Values.tokenizers.fetcher.image }}
{{- printf "%s:%s" $image.repository ($image.tag | default .Chart.AppVersion) }}
{{- end }}

{{/* --tokenizer value: name=MOUNT/name for each preloaded tokenizer, comma-joined. */}}
{{- define "maskd.tokenizerFlag" -}}
{{- $mount := .Values.tokenizers.mountPath }}
{{- $items := list }}
{{- range .Values.maskd.tokenizers }}
{{- $items = append $items (printf "%s=%s/%s" . $mount .) }}
{{- end }}
{{- join "," $items }}
{{- end }}

{{/* Environment variable carrying flag NAME from the ConfigMap. */}}
{{- define "maskd.flagEnv" -}}
{{- printf "MASKD_FLAG_%s" (upper .) }}
{{- end }}
