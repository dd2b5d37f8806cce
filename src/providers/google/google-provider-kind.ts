/** The provider kind of this adapter; also the `providerKind` of the opaque state it produces. */
export const GOOGLE_PROVIDER_KIND = "google";
