/**
 * The messages Bosun exchanges with a registry server (`opm serve`): operator-registry's
 * `api.Registry` service (pkg/api/registry.proto of operator-registry v1.73) and gRPC's standard
 * health check (`grpc.health.v1.Health`). Interoperability rests on the package, service, method
 * and message names and the field numbers, which are theirs; the schema below is our own and
 * declares only the fields Bosun reads. protobuf decoders skip fields they do not know, so what a
 * server sends beyond these (provided and required APIs, dependencies: all of them also in the
 * bundle's properties) costs nothing but the bytes.
 *
 * Pure: bytes in, plain objects out (and the reverse, which the tests' servers use).
 */
import protobuf from 'protobufjs';

const schema = `
syntax = "proto3";

package api;

// A package's name, one per message of ListPackages.
message PackageName {
  string name = 1;
}

// Set on a package, channel or bundle that its catalog deprecates.
message Deprecation {
  string message = 1;
}

// A channel as GetPackage describes it: its name and its head bundle.
message Channel {
  string name = 1;
  string csvName = 2;
  Deprecation deprecation = 3;
}

message Package {
  string name = 1;
  repeated Channel channels = 2;
  string defaultChannelName = 3;
  Deprecation deprecation = 4;
}

// One property of a bundle; the value is JSON text.
message Property {
  string type = 1;
  string value = 2;
}

// A bundle in one channel: ListBundles sends one per channel entry. Its manifests (object,
// csvJson) come only from GetBundle when the bundle has an image (bundlePath).
message Bundle {
  string csvName = 1;
  string packageName = 2;
  string channelName = 3;
  string csvJson = 4;
  repeated string object = 5;
  string bundlePath = 6;
  string version = 9;
  string skipRange = 10;
  repeated Property properties = 12;
  string replaces = 13;
  repeated string skips = 14;
  Deprecation deprecation = 15;
}

message ListPackageRequest {}

message ListBundlesRequest {}

message GetPackageRequest {
  string name = 1;
}

message GetBundleRequest {
  string pkgName = 1;
  string channelName = 2;
  string csvName = 3;
}
`;

const healthSchema = `
syntax = "proto3";

package grpc.health.v1;

message HealthCheckRequest {
  string service = 1;
}

message HealthCheckResponse {
  enum ServingStatus {
    UNKNOWN = 0;
    SERVING = 1;
    NOT_SERVING = 2;
    SERVICE_UNKNOWN = 3;
  }
  ServingStatus status = 1;
}
`;

const root = new protobuf.Root();
protobuf.parse(schema, root, { keepCase: true });
protobuf.parse(healthSchema, root, { keepCase: true });

/** The full method names, as gRPC puts them in the request path. */
export const RegistryMethod = {
  ListPackages: '/api.Registry/ListPackages',
  GetPackage: '/api.Registry/GetPackage',
  ListBundles: '/api.Registry/ListBundles',
  GetBundle: '/api.Registry/GetBundle',
  HealthCheck: '/grpc.health.v1.Health/Check',
} as const;
export type RegistryMethod = (typeof RegistryMethod)[keyof typeof RegistryMethod];

/** How messages name a call: `ListBundles`, `health check`. */
export const methodName = (m: RegistryMethod): string =>
  m === RegistryMethod.HealthCheck ? 'health check' : m.split('/').slice(-1)[0]!;

/**
 * The service name OLM's registry client asks the health check about (operator-registry
 * pkg/client: `HealthCheckRequest{Service: "Registry"}`); `opm serve` answers for any name, a
 * server with per-service health answers for this one.
 */
export const HealthService = 'Registry';

export const ServingStatus = { Unknown: 0, Serving: 1, NotServing: 2, ServiceUnknown: 3 } as const;
export type ServingStatus = (typeof ServingStatus)[keyof typeof ServingStatus];

export const servingStatusName = (s: number): string =>
  ['UNKNOWN', 'SERVING', 'NOT_SERVING', 'SERVICE_UNKNOWN'][s] ?? `status ${s}`;

export interface Deprecation {
  message: string;
}

/** A message field the server left unset decodes as null. */
type Unset<T> = T | null;

export interface RegistryChannel {
  name: string;
  csvName: string;
  deprecation: Unset<Deprecation>;
}

export interface RegistryPackage {
  name: string;
  channels: RegistryChannel[];
  defaultChannelName: string;
  deprecation: Unset<Deprecation>;
}

export interface RegistryProperty {
  type: string;
  value: string;
}

export interface RegistryBundle {
  csvName: string;
  packageName: string;
  channelName: string;
  csvJson: string;
  object: string[];
  bundlePath: string;
  version: string;
  skipRange: string;
  properties: RegistryProperty[];
  replaces: string;
  skips: string[];
  deprecation: Unset<Deprecation>;
}

export interface GetBundleRequest {
  pkgName: string;
  channelName: string;
  csvName: string;
}

/** A message type's encoder and decoder; decoded messages have every field (proto3 defaults). */
export interface Codec<T> {
  encode(value: T): Buffer;
  decode(bytes: Uint8Array): T;
}

function codec<T>(name: string): Codec<T> {
  const type = root.lookupType(name);
  // Defaults make absent fields '' and [] as in Go; a message field left unset stays undefined.
  const toObject = (m: protobuf.Message) => type.toObject(m, { defaults: true, arrays: true, enums: Number });
  return {
    encode: (value) => Buffer.from(type.encode(type.fromObject(value as Record<string, unknown>)).finish()),
    decode: (bytes) => toObject(type.decode(bytes)) as T,
  };
}

export const wire = {
  packageName: codec<{ name: string }>('api.PackageName'),
  package: codec<RegistryPackage>('api.Package'),
  bundle: codec<RegistryBundle>('api.Bundle'),
  listPackagesRequest: codec<Record<string, never>>('api.ListPackageRequest'),
  listBundlesRequest: codec<Record<string, never>>('api.ListBundlesRequest'),
  getPackageRequest: codec<{ name: string }>('api.GetPackageRequest'),
  getBundleRequest: codec<GetBundleRequest>('api.GetBundleRequest'),
  healthCheckRequest: codec<{ service: string }>('grpc.health.v1.HealthCheckRequest'),
  healthCheckResponse: codec<{ status: number }>('grpc.health.v1.HealthCheckResponse'),
};
