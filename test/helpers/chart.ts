/**
 * The chart tests' rendering (deploy/helm/airlock through a real helm, helm.ts): `helm template`
 * with a values file, the manifests parsed, and each checked against the Kubernetes OpenAPI and
 * CRD schemas (kubernetes-models).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { parseAllDocuments } from 'yaml';
import * as core from 'kubernetes-models/v1';
import * as apps from 'kubernetes-models/apps/v1';
import * as policy from 'kubernetes-models/policy/v1';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import type { Helm } from './helm.js';

export const CHART = fileURLToPath(new URL('../../deploy/helm/airlock', import.meta.url));

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

const MODELS: Record<string, new (o: never) => { validate(): void }> = {
  'v1/ConfigMap': core.ConfigMap,
  'v1/Service': core.Service,
  'v1/PersistentVolumeClaim': core.PersistentVolumeClaim,
  'v1/Secret': core.Secret,
  'apps/v1/Deployment': apps.Deployment,
  'policy/v1/PodDisruptionBudget': policy.PodDisruptionBudget,
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor,
};

/** `helm template docs CHART --namespace docs` with `values` (written as a file under `work`): its manifests, or its refusal. */
export async function renderChart(
  helm: Helm,
  work: string,
  values: Record<string, unknown>,
): Promise<{ status: number | null; objects: K8sObject[]; stderr: string }> {
  const file = join(work, `values-${Math.random().toString(36).slice(2)}.json`);
  await writeFile(file, JSON.stringify(values));
  const r = helm.run(['template', 'docs', CHART, '--namespace', 'docs', '--values', file]);
  if (r.status !== 0) return { status: r.status, objects: [], stderr: r.stderr };
  const objects = parseAllDocuments(r.stdout)
    .map((d) => d.toJS() as K8sObject)
    .filter(Boolean);
  return { status: 0, objects, stderr: r.stderr };
}

/** Every manifest valid against its kind's schema. */
export function validateAll(objects: K8sObject[]): void {
  for (const o of objects) {
    const Model = MODELS[`${o.apiVersion}/${o.kind}`];
    expect(Model, `no schema for ${o.apiVersion} ${o.kind}`).toBeDefined();
    expect(() => new Model!(o as never).validate(), `${o.kind} ${o.metadata.name}`).not.toThrow();
  }
}

export const findObject = (objects: K8sObject[], kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name);
