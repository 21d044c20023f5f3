// Package v1 names each Kubernetes type that OLM's kinds embed (a Deployment's spec in a CSV,
// RBAC rules, webhook rules, a Subscription's env and volumes, label selectors, ...), so that
// controller-gen describes them as structural schemas for Bosun's CRDs, exactly as it describes
// them in OLM's own CRDs. src/apis/crds/generate-kubernetes.ts runs it and keeps the result.
//
// +groupName=schemas.bosun.dev
package v1

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// KubernetesTypes exists only to be described: each field of its spec is one embedded type,
// named after it.
//
// +kubebuilder:object:root=true
type KubernetesTypes struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              Types `json:"spec"`
}

// Types holds one field per embedded type. Field names are the keys Bosun's CRD builder uses.
type Types struct {
	DeploymentSpec       appsv1.DeploymentSpec                      `json:"DeploymentSpec"`
	PolicyRule           rbacv1.PolicyRule                          `json:"PolicyRule"`
	RuleWithOperations   admissionregistrationv1.RuleWithOperations `json:"RuleWithOperations"`
	LabelSelector        metav1.LabelSelector                       `json:"LabelSelector"`
	Condition            metav1.Condition                           `json:"Condition"`
	ObjectReference      corev1.ObjectReference                     `json:"ObjectReference"`
	Toleration           corev1.Toleration                          `json:"Toleration"`
	Affinity             corev1.Affinity                            `json:"Affinity"`
	ResourceRequirements corev1.ResourceRequirements                `json:"ResourceRequirements"`
	EnvFromSource        corev1.EnvFromSource                       `json:"EnvFromSource"`
	EnvVar               corev1.EnvVar                              `json:"EnvVar"`
	Volume               corev1.Volume                              `json:"Volume"`
	VolumeMount          corev1.VolumeMount                         `json:"VolumeMount"`
	Quantity             resource.Quantity                          `json:"Quantity"`
	IntOrString          intstr.IntOrString                         `json:"IntOrString"`
}
