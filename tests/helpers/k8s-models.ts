import * as keda from '@kubernetes-models/keda/keda.sh/v1alpha1';
import * as apps from 'kubernetes-models/apps/v1';
import * as autoscaling from 'kubernetes-models/autoscaling/v2';
import * as networking from 'kubernetes-models/networking.k8s.io/v1';
import * as policy from 'kubernetes-models/policy/v1';
import * as core from 'kubernetes-models/v1';

/** A rendered Kubernetes object, as `kubectl kustomize` prints it. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string> };
}

type ModelClass = new (data: object) => { validate(): void };

/** The API groups the manifests use: Kubernetes' own (`kubernetes-models`) and KEDA's (`@kubernetes-models/keda`). */
const GROUPS: Record<string, Record<string, unknown>> = {
  v1: core,
  'apps/v1': apps,
  'autoscaling/v2': autoscaling,
  'networking.k8s.io/v1': networking,
  'policy/v1': policy,
  'keda.sh/v1alpha1': keda,
};

/** Throws with the schema's message when the object does not validate; an unknown kind is an error too, so nothing goes unvalidated. */
export function validateObject(object: K8sObject): void {
  const Model = GROUPS[object.apiVersion]?.[object.kind] as ModelClass | undefined;
  if (!Model) throw new Error(`no schema for ${object.apiVersion} ${object.kind}: add its model to tests/helpers/k8s-models.ts`);
  try {
    new Model(object).validate();
  } catch (error) {
    throw new Error(`${object.kind} ${object.metadata?.name}: ${error instanceof Error ? error.message : String(error)}`);
  }
}
