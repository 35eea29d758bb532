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

{{/*
The probe command when kubelet's gRPC probe cannot be used (TLS, Unix socket), as a
JSON list; empty when it can.
*/}}
{{- define "maskd.probeExec" -}}
{{- $tls := .Values.security.tls.secretName -}}
{{- if or $tls .Values.maskd.unixSocket -}}
{{- $args := list "/usr/local/bin/maskctl" "health" "--deadline=2s" -}}
{{- if .Values.maskd.unixSocket -}}
{{- $args = append $args (printf "--server=unix://%s" .Values.maskd.unixSocket) -}}
{{- else -}}
{{- $args = append $args (printf "--server=127.0.0.1:%v" .Values.maskd.grpcPort) -}}
{{- end -}}
{{- if $tls -}}
{{- $name := .Values.security.tls.probeServerName | default (printf "%s.%s.svc" (include "maskd.fullname" .) .Release.Namespace) -}}
{{- $args = concat $args (list "--tls_ca=/etc/maskd/tls/ca.crt" (printf "--tls_server_name=%s" $name)) -}}
{{- if .Values.security.tls.mutual -}}
{{- $args = concat $args (list "--tls_cert=/etc/maskd/tls/tls.crt" "--tls_key=/etc/maskd/tls/tls.key") -}}
{{- end -}}
{{- end -}}
{{- toJson $args -}}
{{- end -}}
{{- end }}

{{/*
Name of the metrics Service (ClusterIP only, whatever service.type is).
*/}}
{{- define "maskd.metricsName" -}}
{{- printf "%s-metrics" (include "maskd.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
