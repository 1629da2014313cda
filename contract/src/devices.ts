/**
 * Device presets (the `device` parameter, docs/reference/api.md). A preset sets viewport, device
 * scale factor and user agent; phones and tablets also get mobile + touch emulation.
 */

export type DeviceGroup = 'Desktop' | 'iPhone' | 'Samsung' | 'Pixel' | 'iPad' | 'Other tablet';

export interface DevicePreset {
  id: string;
  group: DeviceGroup;
  width: number;
  height: number;
  scale: number;
  mobile: boolean;
  touch: boolean;
  userAgent: string;
}

const CHROME_VERSION = '131.0.0.0';
const desktopUa = `Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${CHROME_VERSION} Safari/537.36`;
const iphoneUa = (ios: string) =>
  `Mozilla/5.0 (iPhone; CPU iPhone OS ${ios.replace('.', '_')} like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/${ios} Mobile/15E148 Safari/604.1`;
const androidUa = (model: string, version: number) =>
  `Mozilla/5.0 (Linux; Android ${version}; ${model}) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${CHROME_VERSION} Mobile Safari/537.36`;
const androidTabletUa = (model: string, version: number) =>
  `Mozilla/5.0 (Linux; Android ${version}; ${model}) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${CHROME_VERSION} Safari/537.36`;
const ipadUa =
  'Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';

// Generic in the id so that DeviceId is the union of the preset ids, not `string`.
const desktop = <Id extends string>(id: Id, width: number, height: number): DevicePreset & { id: Id } => ({
  id,
  group: 'Desktop',
  width,
  height,
  scale: 1,
  mobile: false,
  touch: false,
  userAgent: desktopUa,
});
// Phones and tablets alike: a mobile viewport with touch, in their group, with their own user agent.
const handheld = <Id extends string>(
  id: Id,
  group: DeviceGroup,
  width: number,
  height: number,
  scale: number,
  userAgent: string,
): DevicePreset & { id: Id } => ({
  id,
  group,
  width,
  height,
  scale,
  mobile: true,
  touch: true,
  userAgent,
});

export const DEVICE_PRESETS = [
  desktop('desktop-1080p', 1920, 1080),
  desktop('desktop-1440p', 2560, 1440),
  handheld('iphone-se', 'iPhone', 375, 667, 2, iphoneUa('17.5')),
  handheld('iphone-14', 'iPhone', 390, 844, 3, iphoneUa('16.6')),
  handheld('iphone-14-plus', 'iPhone', 428, 926, 3, iphoneUa('16.6')),
  handheld('iphone-14-pro-max', 'iPhone', 430, 932, 3, iphoneUa('16.6')),
  handheld('iphone-15', 'iPhone', 393, 852, 3, iphoneUa('17.5')),
  handheld('iphone-15-pro-max', 'iPhone', 430, 932, 3, iphoneUa('17.5')),
  handheld('iphone-16', 'iPhone', 393, 852, 3, iphoneUa('18.1')),
  handheld('iphone-16-pro-max', 'iPhone', 440, 956, 3, iphoneUa('18.1')),
  handheld('samsung-galaxy-s24', 'Samsung', 360, 780, 3, androidUa('SM-S921B', 14)),
  handheld('samsung-galaxy-s24-ultra', 'Samsung', 384, 824, 3.75, androidUa('SM-S928B', 14)),
  handheld('samsung-galaxy-a54', 'Samsung', 360, 800, 2.625, androidUa('SM-A546B', 14)),
  handheld('samsung-galaxy-z-fold5', 'Samsung', 373, 841, 3, androidUa('SM-F946B', 14)),
  handheld('google-pixel-8', 'Pixel', 412, 915, 2.625, androidUa('Pixel 8', 14)),
  handheld('google-pixel-8-pro', 'Pixel', 412, 915, 3.5, androidUa('Pixel 8 Pro', 14)),
  handheld('ipad-mini', 'iPad', 768, 1024, 2, ipadUa),
  handheld('ipad-air', 'iPad', 820, 1180, 2, ipadUa),
  handheld('ipad-pro-11', 'iPad', 834, 1194, 2, ipadUa),
  handheld('ipad-pro-12.9', 'iPad', 1024, 1366, 2, ipadUa),
  handheld('samsung-galaxy-tab-s9', 'Other tablet', 800, 1280, 2, androidTabletUa('SM-X710', 14)),
  handheld('surface-pro', 'Other tablet', 912, 1368, 2, desktopUa),
] as const satisfies readonly DevicePreset[];

export type DeviceId = (typeof DEVICE_PRESETS)[number]['id'];

/** Legacy category names accepted in `device`, mapped to a preset. */
export const LEGACY_DEVICE_CATEGORIES = {
  desktop: 'desktop-1080p',
  mobile: 'iphone-15',
  tablet: 'ipad-air',
} as const satisfies Record<string, DeviceId>;

export type LegacyDeviceCategory = keyof typeof LEGACY_DEVICE_CATEGORIES;
/** What `device` accepts: a preset id or a legacy category. */
export type DeviceName = DeviceId | LegacyDeviceCategory;

export const DEVICE_IDS = DEVICE_PRESETS.map((d) => d.id) as [DeviceId, ...DeviceId[]];
export const DEVICE_NAMES = [...DEVICE_IDS, ...(Object.keys(LEGACY_DEVICE_CATEGORIES) as LegacyDeviceCategory[])] as [
  DeviceId | LegacyDeviceCategory,
  ...(DeviceId | LegacyDeviceCategory)[],
];

/** Resolves a device ID or legacy category to its preset. */
export function resolveDevice(name: DeviceId | LegacyDeviceCategory): DevicePreset {
  const id = name in LEGACY_DEVICE_CATEGORIES ? LEGACY_DEVICE_CATEGORIES[name as LegacyDeviceCategory] : name;
  const preset = DEVICE_PRESETS.find((d) => d.id === id);
  if (!preset) throw new Error(`Unknown device ${name}`);
  return preset;
}
