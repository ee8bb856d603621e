// The public key set of the suite's test key (key.json holds its private half, for run.mjs to sign deliveries).
export const jwks = {"keys":[{"kty":"EC","crv":"P-256","x":"VtaejT0uy-Pr332MvY38WrDFxM9TnrwFpOzXbhkuYIU","y":"OvcPGGpoCpXteKAhgL_Qm2NbXYf-eKTZptyIUJaaqr4","use":"sig","alg":"ES256","kid":"bundler-suite"}]};
