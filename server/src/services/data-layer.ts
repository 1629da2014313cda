import type { Config } from '../config.js';
import { egressPolicy, type AddressPolicy } from '../security/address-policy.js';
import { loadServerKey } from '../security/server-key.js';
import { systemResolver, type Resolver } from '../security/resolver.js';
import { ApiKeyService } from './api-keys.js';
import { SecretBox } from '../security/secret-box.js';
import { SigningSecrets } from './signing-secrets.js';
import { StorageUploader } from './storage.js';
import { PlanLookup, UsageService } from './usage-service.js';
import { AccountsRepository } from '../store/accounts-repository.js';
import { ApiKeyRepository } from '../store/api-key-repository.js';
import { CreditRepository } from '../store/credit-repository.js';
import { StorageConfigRepository } from '../store/storage-config-repository.js';
import { migrate, openDatabase, type Database } from '../store/database.js';

/*
 * The database side of the service, without the browser, the HTTP app or the job queue: the admin
 * CLI loads only this module (and so starts in a fraction of the time `serve` needs to load).
 */

/** Everything that needs the database but not the browser (the CLI uses only this part). */
export interface DataLayer {
  db: Database;
  accounts: AccountsRepository;
  credits: CreditRepository;
  apiKeys: ApiKeyService;
  /** API keys' signing secrets (signed links; webhook signatures): `signingSecretFor(keyId)`. */
  signingSecrets: SigningSecrets;
  plans: PlanLookup;
  usage: UsageService;
  /** Storage configurations; creating one needs STORAGE_ENCRYPTION_KEY. */
  storageConfigs: StorageConfigRepository;
  /** Uploads and the configurations' connection test. */
  storage: StorageUploader;
  /** The network policy shared by the egress proxy, the up-front checks and the storage client. */
  policy: AddressPolicy;
  resolve: Resolver;
}

/** `policy`: the one the egress proxy enforces, when the browser side started first (browser-start.ts). */
export async function openDataLayer(
  config: Config,
  resolve: Resolver = systemResolver,
  policy: AddressPolicy = egressPolicy(config),
): Promise<DataLayer> {
  const db = openDatabase(config.DATABASE_URL);
  await migrate(db);
  const credits = new CreditRepository(db);
  const plans = new PlanLookup(db, config);
  const keyRows = new ApiKeyRepository(db);
  const signingSecrets = new SigningSecrets(keyRows, loadServerKey(config.SIGNING_SECRETS_KEY, config.DATABASE_URL));
  return {
    db,
    accounts: new AccountsRepository(db),
    credits,
    apiKeys: new ApiKeyService(keyRows, signingSecrets),
    signingSecrets,
    plans,
    usage: new UsageService(credits, plans),
    storageConfigs: new StorageConfigRepository(db, SecretBox.fromSetting(config.STORAGE_ENCRYPTION_KEY)),
    storage: new StorageUploader({
      connectTimeoutMs: config.STORAGE_CONNECT_TIMEOUT_MS,
      requestTimeoutMs: config.STORAGE_REQUEST_TIMEOUT_MS,
      policy,
      resolve,
    }),
    policy,
    resolve,
  };
}
