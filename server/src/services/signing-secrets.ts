import { ApiError } from '../errors.js';
import type { ApiKeyRepository } from '../store/api-key-repository.js';
import { generateSigningSecret } from '../security/signing.js';
import { SecretBox } from '../security/secret-box.js';

/** Binds a ciphertext to its key row: a secret copied into another row does not decrypt. */
const associatedData = (keyId: string) => `api_key_signing_secret:${keyId}`;

/**
 * API keys' signing secrets at rest: sealed with the server key (AES-256-GCM), opened only to
 * check a signed link or, later, to sign a webhook. The database alone holds no usable secret.
 */
export class SigningSecrets {
  private readonly box: SecretBox;

  constructor(
    private readonly keys: ApiKeyRepository,
    serverKey: Buffer,
  ) {
    this.box = new SecretBox(serverKey);
  }

  /** A fresh secret and its sealed form for the key row `keyId`. */
  issue(keyId: string): { secret: string; sealed: string } {
    const secret = generateSigningSecret();
    return { secret, sealed: this.box.encrypt(secret, associatedData(keyId)) };
  }

  /**
   * The clear signing secret of an API key, by the key's id; undefined when the key does not exist
   * or has none (made before signed links and never rotated). For signed links and webhook signatures.
   */
  async signingSecretFor(keyId: string): Promise<string | undefined> {
    const sealed = await this.keys.findSigningSecret(keyId);
    return sealed ? this.open(keyId, sealed) : undefined;
  }

  /** Throws a 500 whose log line names the cause: the server key differs from the one that sealed it. */
  open(keyId: string, sealed: string): string {
    try {
      return this.box.decrypt(sealed, associatedData(keyId));
    } catch {
      throw new ApiError('INTERNAL_ERROR', 'Internal error: the signed link could not be checked; nothing was charged', {
        logDetail: new Error(
          `the signing secret of key ${keyId} cannot be decrypted: SIGNING_SECRETS_KEY (or the data folder's signing-secrets.key) differs from the key that sealed it`,
        ),
      });
    }
  }
}
