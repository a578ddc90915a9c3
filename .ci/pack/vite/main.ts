// The client in a browser app: same-origin calls with the console's session cookie.
import { type DeviceBody, Warren } from '@warren/client';

const warren = new Warren({ url: window.location.origin, session: {} });
const list = document.getElementById('devices');
warren.devices.list().then((devices: DeviceBody[]) => {
  for (const device of devices) {
    const item = document.createElement('li');
    item.textContent = device.name;
    list?.append(item);
  }
});

export async function firstName(): Promise<number | undefined> {
  const [first] = await warren.devices.list();
  // @ts-expect-error: a device's name is a string (the contract's schema, through typebox)
  return first?.name;
}
