import type { Response } from 'express';
import type { Assets } from './views/layout.js';
import { sendPage } from './context.js';
import { dashboardContext } from './session.js';
import { messagePage } from './views/auth-pages.js';

/**
 * The answer of a page that has one thing to say (not found, unavailable, refused), with a button
 * back to the list it belongs to. Each list's routes make theirs once.
 */
export const messageReplies =
  (assets: Assets, back: { href: string; label: string }) =>
  (res: Response, status: number, title: string, text: string, href = back.href) =>
    sendPage(res, messagePage(assets, { title, message: text, ctx: dashboardContext(res), action: { href, label: back.label } }), status);
