// Types of both the API client (`client.webhooks.jwks()`) and the webhook modules (verifier options, `exportKeys()`,
// the test signer's `jwks`): every module that has either declares them.

/** A public JSON Web Key of the API's key set (RFC 7517). */
export interface JsonWebKey {
  kty: string;
  crv?: string;
  x?: string;
  y?: string;
  kid?: string;
  alg?: string;
  use?: string;
  key_ops?: string[];
  [member: string]: unknown;
}

/** A JWKS document: `{ keys: [...] }`. */
export interface JsonWebKeySet {
  keys: JsonWebKey[];
  /** Set by `exportKeys()`: when the verifier fetched these keys (epoch seconds of its clock). */
  fetchedAt?: number;
  /** Set by `exportKeys()`: when they go stale; a verifier seeded with them fetches again from then on. */
  staleAt?: number;
}
