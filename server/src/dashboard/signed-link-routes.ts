import type { Request, Router } from 'express';
import { signQuery } from '../security/signing.js';
import type { DashboardServices } from './context.js';
import { handle, organizationOf } from './session.js';
import { keyStatus } from './views/keys-page.js';

/** Parameters a playground link may not carry: the link's own, and keys that would sit in a public URL. */
const RESERVED = ['apiKey', 'keyId', 'expires', 'signature', 'openaiApiKey', 'proxyPassword', 'requestStorageSecretAccessKey'];
/** Lifetimes the playground offers, in seconds; 0 = no expiry. */
export const LINK_LIFETIMES = [3_600, 86_400, 604_800, 2_592_000, 0] as const;

const field = (req: Request, name: string) => {
  const value = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '';
};

/**
 * The playground's signed link: the server signs the capture query the page built with the chosen
 * key's secret, so the secret never travels to the browser. Answers JSON `{ url }` or `{ error }`.
 */
export function mountSignedLinkRoutes(router: Router, services: DashboardServices): void {
  router.post(
    '/playground/signed-link',
    handle(async (req, res) => {
      const organizationId = organizationOf(res).organizationId;
      const keys = await services.data.apiKeys.list(organizationId);
      const key = keys.find((k) => k.id === field(req, 'keyId') && keyStatus(k, services.now()) === 'active');
      if (!key) return void res.status(422).json({ error: 'Choose one of your active keys.' });
      const query = field(req, 'query');
      const params = new URLSearchParams(query);
      const reserved = RESERVED.find((name) => params.has(name));
      if (reserved) return void res.status(422).json({ error: `${reserved} cannot be part of a signed link.` });
      const lifetime = Number(field(req, 'expiresIn'));
      if (!(LINK_LIFETIMES as readonly number[]).includes(lifetime)) {
        return void res.status(422).json({ error: `expiresIn must be one of ${LINK_LIFETIMES.join(', ')} seconds.` });
      }
      const secret = await services.data.apiKeys.signingSecrets.signingSecretFor(key.id);
      if (!secret) return void res.status(422).json({ error: 'This key has no signing secret yet: give it one on the API keys page.' });
      let signed = `${query}${query ? '&' : ''}keyId=${encodeURIComponent(key.id)}`;
      if (lifetime > 0) signed += `&expires=${Math.floor(services.now() / 1000) + lifetime}`;
      res.setHeader('Cache-Control', 'no-store');
      res.json({ url: `/capture?${signed}&signature=${signQuery(secret, signed)}` });
    }),
  );
}
